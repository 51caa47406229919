"""Sources kept in sync: a directory and a git working tree, synced incrementally (only what
changed is read), with renames, deletions, patterns, failures with reasons, one sync at a time,
schedules run by db_worker, and `sync --watch` picking a change up within seconds."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion import source_files
from mnemosyne.ingestion.listings import SourceUnavailable
from mnemosyne.ingestion.syncing import sync_source
from mnemosyne.library.models import Chunk, Item, Source
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.search.service import SearchRequest, search
from tests.servers import FAKE_AWS_ENV, ROOT, child_env, db_worker, free_port

pytestmark = pytest.mark.django_db(transaction=True)


def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def add(path: Path, *options: str) -> Source:
    out = io.StringIO()
    call_command("add_source", str(path), "--library=Docs", "--collection=main", *options, stdout=out)
    return Source.objects.get(location=str(path.resolve()))


def sources_of(source: Source) -> set[str]:
    return set(Item.objects.filter(collection=source.collection).values_list("source", flat=True))


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "handbook"
    write(
        root,
        {
            "intro.md": "# Intro\n\nThe handbook starts here.\n",
            "guides/setup.md": "# Setup\n\nInstall the tide gauge before the spring tide.\n",
            "guides/backup.md": "# Backup\n\nBack the database up every night.\n",
            "drafts/idea.md": "# Idea\n\nNot ready.\n",
            "script.py": "print('not a document here')\n",
        },
    )
    return root


def test_a_directory_source_syncs_incrementally(
    docs: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = add(docs, "--exclude=drafts/")
    assert source.last_status == "ok" or Source.objects.get(pk=source.pk).last_status == "ok"
    source.refresh_from_db()
    assert source.last_counts["added"] == 3
    assert sources_of(source) == {
        "handbook/intro.md",
        "handbook/guides/setup.md",
        "handbook/guides/backup.md",
    }
    assert Item.objects.filter(origin=source).count() == 3

    # Nothing changed: nothing is read.
    reads: list[str] = []
    real = source_files._reader

    def counting(entry: source_files.SourceFile) -> Callable[[], bytes]:
        def read() -> bytes:
            reads.append(entry.source)
            return real(entry)()

        return read

    monkeypatch.setattr(source_files, "_reader", counting)
    result = sync_source(source, embedder=embedder)
    assert (result.unchanged, result.added, result.updated, reads) == (3, 0, 0, [])

    # One edit, one rename, one deletion, one new file.
    write(docs, {"guides/setup.md": "# Setup\n\nInstall the tide gauge at low water.\n"})
    (docs / "guides" / "backup.md").rename(docs / "guides" / "backups.md")
    (docs / "intro.md").unlink()
    write(docs, {"faq.md": "# FAQ\n\nAsk the harbour master.\n"})
    chunks_before = set(
        Chunk.objects.filter(item__source="handbook/guides/backup.md").values_list("uid", flat=True)
    )
    result = sync_source(source, embedder=embedder)
    assert result.counts() == {
        "added": 1,
        "updated": 1,
        "unchanged": 0,
        "renamed": 1,
        "deleted": 1,
        "failed": 0,
    }
    # Only the changed files are read (hashed, and read again to be ingested unless renamed).
    assert sorted(set(reads)) == ["handbook/faq.md", "handbook/guides/backups.md", "handbook/guides/setup.md"]
    assert sources_of(source) == {"handbook/faq.md", "handbook/guides/setup.md", "handbook/guides/backups.md"}
    # The renamed item kept its chunks (nothing re-embedded) and took the new name.
    renamed = Item.objects.get(source="handbook/guides/backups.md")
    assert set(Chunk.objects.filter(item=renamed).values_list("uid", flat=True)) == chunks_before
    hits = search(SearchRequest(query="when to install the tide gauge", limit=1), embedder=embedder).hits
    assert "low water" in hits[0].chunk.text_preview


def test_a_file_that_cannot_be_read_is_reported_and_retried(docs: Path, embedder: Embedder) -> None:
    source = add(docs, "--exclude=drafts/")
    write(docs, {"broken.md": ""})
    result = sync_source(source, embedder=embedder)
    assert result.failed == 1 and "broken.md: empty file" in result.errors[0]
    source.refresh_from_db()
    assert source.last_status == "partial" and "empty file" in source.last_error
    write(docs, {"broken.md": "# Fixed\n\nNow it has text.\n"})
    assert sync_source(source, embedder=embedder).added == 1


def test_include_patterns_are_gitignore_style(docs: Path, embedder: Embedder) -> None:
    source = add(docs, "--include=guides/", "--include=!guides/backup.md")
    assert sources_of(source) == {"handbook/guides/setup.md"}


def test_a_missing_directory_or_a_path_that_is_not_a_repository(tmp_path: Path, docs: Path) -> None:
    with pytest.raises(CommandError, match=r"cannot be synced: .* is not a directory"):
        add(tmp_path / "nowhere")
    with pytest.raises(CommandError, match="is not a git repository"):
        add(docs, "--git")
    source = Source.objects.get(location=str(docs.resolve()), kind="git")
    assert source.last_status == "failed" and "not a git repository" in source.last_error


def test_symlink_loops_do_not_hang_a_sync(docs: Path, embedder: Embedder) -> None:
    (docs / "loop").symlink_to(docs, target_is_directory=True)
    (docs / "guides" / "back").symlink_to(docs / "guides", target_is_directory=True)
    source = add(docs)
    assert "handbook/loop/intro.md" not in sources_of(source)


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
    )


def test_a_git_source_syncs_its_committed_files(tmp_path: Path, embedder: Embedder) -> None:
    repo = tmp_path / "project"
    write(
        repo,
        {
            "README.md": "# Project\n\nA harbour tide tracker.\n",
            "docs/usage.md": "# Usage\n\nRun it daily.\n",
        },
    )
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first")
    source = add(repo, "--git")
    assert sources_of(source) == {"project/README.md", "project/docs/usage.md"}
    # Uncommitted edits are not synced; a commit is.
    write(repo, {"docs/usage.md": "# Usage\n\nRun it hourly.\n"})
    assert sync_source(source, embedder=embedder).counts()["updated"] == 0
    git(repo, "mv", "docs/usage.md", "docs/running.md")
    git(repo, "commit", "-q", "-am", "rename and edit")
    result = sync_source(source, embedder=embedder)
    assert result.counts()["added"] == 1 and result.counts()["deleted"] == 1  # renamed *and* edited
    assert sources_of(source) == {"project/README.md", "project/docs/running.md"}
    git(repo, "mv", "README.md", "INDEX.md")
    git(repo, "commit", "-q", "-m", "pure rename")
    assert sync_source(source, embedder=embedder).counts()["renamed"] == 1
    source.refresh_from_db()
    assert len(source.last_commit) == 40


def test_a_scheduled_sync_runs_in_the_background_worker(docs: Path, shared_data_dir: Path) -> None:
    source = add(docs, "--every=1", "--no-sync")
    source.refresh_from_db()
    assert source.next_sync_at is not None and source.last_sync_at is None
    # Due in a minute: bring it forward so the test does not wait.
    from mnemosyne.ingestion.syncing import sync_scheduled

    Source.objects.filter(pk=source.pk).update(next_sync_at=source.next_sync_at)
    sync_scheduled.enqueue(source_uid=source.uid, due=source.next_sync_at.isoformat())
    with db_worker(shared_data_dir):
        deadline = time.monotonic() + 120
        while Source.objects.get(pk=source.pk).last_status != "ok":
            assert time.monotonic() < deadline, Source.objects.get(pk=source.pk).last_error
            time.sleep(0.3)
    source.refresh_from_db()
    assert source.last_counts["added"] == 4
    assert source.next_sync_at is not None  # the next one is queued


def test_watch_picks_a_change_up_within_seconds(docs: Path, shared_data_dir: Path) -> None:
    source = add(docs)
    env = child_env(shared_data_dir, {"DATABASE_CONN_MAX_AGE": "0"})
    watcher = subprocess.Popen(
        [sys.executable, "manage.py", "sync", source.uid, "--watch"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert watcher.stdout is not None
        while "Watching" not in watcher.stdout.readline():
            assert watcher.poll() is None
        edited = time.monotonic()
        write(docs, {"news.md": "# News\n\nThe new pier opens on Monday.\n"})
        while not Item.objects.filter(source="handbook/news.md", embedding_status="complete").exists():
            assert time.monotonic() - edited < 5, "not picked up within 5 s"
            time.sleep(0.05)
    finally:
        watcher.terminate()  # SIGTERM stops it cleanly (as Ctrl-C does)
        try:
            assert watcher.wait(timeout=30) == 0
        finally:
            watcher.kill()


def test_sync_with_no_sources_or_an_unknown_one() -> None:
    with pytest.raises(CommandError, match="no sources yet"):
        call_command("sync", stdout=io.StringIO())
    collection = ensure_collection(library=ensure_library(name="X"), name="y")
    Source.objects.create(collection=collection, kind="directory", location="/nonexistent/dir")
    with pytest.raises(CommandError, match="no source with uid src_nope"):
        call_command("sync", "src_nope", stdout=io.StringIO())
    err = io.StringIO()
    with pytest.raises(CommandError, match="1 source"):
        call_command("sync", stdout=io.StringIO(), stderr=err)
    assert "is not a directory" in err.getvalue()


def test_a_source_unavailable_is_recorded(tmp_path: Path, embedder: Embedder) -> None:
    collection = ensure_collection(library=ensure_library(name="X"), name="y")
    source = Source.objects.create(collection=collection, kind="directory", location=str(tmp_path / "gone"))
    with pytest.raises(SourceUnavailable):
        sync_source(source, embedder=embedder)
    source.refresh_from_db()
    assert source.last_status == "failed" and "is not a directory" in source.last_error


@pytest.fixture
def s3(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """moto's S3 server over HTTP, as the S3 sources' endpoint; a client to fill it behind our back."""
    import boto3
    from moto.server import ThreadedMotoServer

    for name, value in FAKE_AWS_ENV.items():
        monkeypatch.setenv(name, value)
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    settings.SOURCES_S3_ENDPOINT_URL = endpoint
    client = boto3.session.Session().client("s3", endpoint_url=endpoint, region_name="us-east-1")
    client.create_bucket(Bucket="team-docs")
    try:
        yield client
    finally:
        server.stop()


def test_an_s3_prefix_syncs_by_etag(s3: Any, embedder: Embedder) -> None:
    s3.put_object(Bucket="team-docs", Key="wiki/tides.md", Body=b"# Tides\n\nSpring tides flood the quay.\n")
    s3.put_object(Bucket="team-docs", Key="wiki/ops/backup.md", Body=b"# Backup\n\nNightly dumps at 02:00.\n")
    s3.put_object(Bucket="team-docs", Key="other/skip.md", Body=b"# Elsewhere\n\nNot under the prefix.\n")
    source = add_location("s3://team-docs/wiki/")
    assert sources_of(source) == {"team-docs/wiki/tides.md", "team-docs/wiki/ops/backup.md"}
    s3.put_object(
        Bucket="team-docs", Key="wiki/tides.md", Body=b"# Tides\n\nNeap tides leave the quay dry.\n"
    )
    s3.copy_object(
        Bucket="team-docs",
        Key="wiki/ops/backups.md",
        CopySource={"Bucket": "team-docs", "Key": "wiki/ops/backup.md"},
    )
    s3.delete_object(Bucket="team-docs", Key="wiki/ops/backup.md")
    result = sync_source(source, embedder=embedder)
    assert (result.updated, result.renamed, result.added, result.deleted, result.unchanged) == (1, 1, 0, 0, 0)
    assert sources_of(source) == {"team-docs/wiki/tides.md", "team-docs/wiki/ops/backups.md"}


def test_an_s3_bucket_that_cannot_be_listed_makes_the_source_unavailable(s3: Any) -> None:
    with pytest.raises(CommandError, match=r"S3 refused listing s3://no-such-bucket/x \(NoSuchBucket\)"):
        add_location("s3://no-such-bucket/x")


def add_location(location: str, *options: str) -> Source:
    call_command(
        "add_source", location, "--library=Docs", "--collection=main", *options, stdout=io.StringIO()
    )
    return Source.objects.get(location=location)


class Website:
    """A small site on 127.0.0.1: pages that link in a loop and out of the prefix, a robots.txt, a
    sitemap (with an index naming itself), ETags answered with 304."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[str, bytes]] = {}
        self.requests: list[tuple[str, int]] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                page = site.pages.get(self.path)
                if page is None:
                    site.requests.append((self.path, 404))
                    self.send_error(404)
                    return
                content_type, body = page
                etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
                if self.headers.get("If-None-Match") == etag:
                    site.requests.append((self.path, 304))
                    self.send_response(304)
                    self.end_headers()
                    return
                site.requests.append((self.path, 200))
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("ETag", etag)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def html(self, path: str, title: str, text: str, links: list[str]) -> None:
        anchors = "".join(f'<a href="{link}">{link}</a> ' for link in links)
        body = f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1><p>{text}</p>"
        self.pages[path] = ("text/html", (body + f"<nav>{anchors}</nav></main></body></html>").encode())

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def website() -> Iterator[Website]:
    site = Website()
    site.pages["/robots.txt"] = ("text/plain", b"User-agent: *\nDisallow: /docs/private/\n")
    site.html(
        "/docs/index.html",
        "Harbour docs",
        "Start here for the harbour handbook.",
        ["tides.html", "/docs/ops/locks.html", "/blog/news.html", "private/secret.html"],
    )
    site.html(
        "/docs/tides.html",
        "Tides",
        "Spring tides flood the quay twice a month.",
        ["index.html", "tides.html#top"],
    )
    site.html(
        "/docs/ops/locks.html",
        "Locks",
        "The lock gates close two hours before low water.",
        ["../index.html", "deep.html"],
    )
    site.html("/docs/ops/deep.html", "Deep", "Too deep for a crawl of depth 2.", [])
    site.html("/docs/private/secret.html", "Secret", "Robots keep crawlers out of here.", [])
    site.html("/blog/news.html", "News", "Outside the prefix.", [])
    yield site
    site.close()


def test_a_website_crawl_is_bounded_by_prefix_depth_and_robots(website: Website, embedder: Embedder) -> None:
    source = add_location(f"{website.base}/docs/index.html", "--max-depth=1")
    assert sources_of(source) == {
        f"{website.base}/docs/index.html",
        f"{website.base}/docs/tides.html",
        f"{website.base}/docs/ops/locks.html",
    }
    # The loop (index ↔ tides, tides → itself) is walked once; nothing outside /docs/ or under robots' ban.
    fetched = [path for path, _ in website.requests]
    assert fetched.count("/docs/index.html") == 1 and "/blog/news.html" not in fetched
    assert "/docs/private/secret.html" not in fetched
    hits = search(SearchRequest(query="when do the lock gates close", limit=1), embedder=embedder).hits
    assert hits[0].chunk.item.source == f"{website.base}/docs/ops/locks.html"
    # A page that went away is deleted at the next sync.
    del website.pages["/docs/tides.html"]
    result = sync_source(source, embedder=embedder)
    assert result.failed == 1 and f"{website.base}/docs/tides.html" in sources_of(
        source
    )  # kept: fetch failed
    website.html("/docs/index.html", "Harbour docs", "Start here.", ["/docs/ops/locks.html"])
    result = sync_source(source, embedder=embedder)
    assert result.deleted == 1 and f"{website.base}/docs/tides.html" not in sources_of(source)


def test_a_website_sitemap_is_fetched_conditionally(website: Website, embedder: Embedder) -> None:
    urls = "".join(
        f"<url><loc>{website.base}{path}</loc></url>"
        for path in ["/docs/tides.html", "/docs/ops/locks.html", "/blog/news.html"]
    )
    website.pages["/docs/sitemap.xml"] = (
        "application/xml",
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'.encode(),
    )
    website.pages["/docs/index.xml"] = (
        "application/xml",
        (
            '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<sitemap><loc>{website.base}/docs/index.xml</loc></sitemap>"
            f"<sitemap><loc>{website.base}/docs/sitemap.xml</loc></sitemap></sitemapindex>"
        ).encode(),
    )
    source = add_location(f"{website.base}/docs/index.xml")
    assert sources_of(source) == {f"{website.base}/docs/tides.html", f"{website.base}/docs/ops/locks.html"}
    website.requests.clear()
    result = sync_source(source, embedder=embedder)
    assert result.unchanged == 2 and result.added == result.updated == 0
    assert sorted(code for path, code in website.requests if path.endswith(".html")) == [304, 304]


def test_a_website_on_a_private_address_is_refused_by_default(website: Website, settings: Any) -> None:
    settings.INGEST_ALLOW_PRIVATE_URLS = False
    with pytest.raises(CommandError, match="private or loopback address"):
        add_location(f"{website.base}/docs/index.xml")


def test_the_admin_and_the_status_report_show_sources(docs: Path, admin_client: Any, tmp_path: Path) -> None:
    from mcp_server.tools.ingestion import as_report
    from mnemosyne.ingestion.status import ingestion_status

    source = add(docs, "--exclude=drafts/")
    page = admin_client.get("/admin/library/source/")
    assert page.status_code == 200 and source.uid.encode() in page.content and b"3 added" in page.content
    collection = ensure_collection(library=ensure_library(name="Docs"), name="main")
    broken = Source.objects.create(
        collection=collection, kind="directory", location=str(tmp_path / "vanished")
    )
    with pytest.raises(SourceUnavailable):
        sync_source(broken)
    report = as_report(ingestion_status())
    assert [state.source_uid for state in report.sources] == [source.uid, broken.uid]
    failed = report.sources[1]
    # Server paths stay on the server: a source is named by its directory's name.
    assert failed.name == "vanished" and str(tmp_path) not in failed.last_error
    assert failed.last_status == "failed" and "is not a directory" in failed.last_error


def test_a_file_over_the_size_limit_is_skipped_before_it_is_read(
    tmp_path: Path, embedder: Embedder, settings: Any
) -> None:
    settings.INGEST_MAX_FILE_BYTES = 200
    repo = tmp_path / "sized"
    write(repo, {"small.md": "# Small\n\nFits.\n", "big.md": "# Big\n\n" + "word " * 100})
    out = io.StringIO()
    call_command("add_source", str(repo), "--library=Docs", "--collection=main", stdout=out)
    assert "big.md: 507 bytes is over INGEST_MAX_FILE_BYTES (200)" in out.getvalue()
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first")
    out = io.StringIO()
    call_command("add_source", str(repo), "--git", "--library=Docs", "--collection=git", stdout=out)
    assert "big.md: 507 bytes is over INGEST_MAX_FILE_BYTES (200)" in out.getvalue()
    assert set(Item.objects.values_list("source", flat=True)) == {"sized/small.md"}
