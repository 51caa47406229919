"""Sources kept in sync: a directory and a git working tree, synced incrementally (only what
changed is read), with renames, deletions, patterns, failures with reasons, one sync at a time,
schedules run by db_worker, and `sync --watch` picking a change up within seconds. S3 and website
sources: test_remote_sources.py."""

from __future__ import annotations

import io
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.sync import files as source_files
from mnemosyne.ingestion.sync.listings import SourceUnavailable
from mnemosyne.ingestion.sync.runs import sync_source
from mnemosyne.library.models import Chunk, Item, Source
from mnemosyne.library.services import advisory_lock, ensure_collection, ensure_library
from mnemosyne.search.service import SearchRequest, search
from tests.ingestion.source_helpers import add, sources_of, write
from tests.servers import ROOT, child_env, db_worker

pytestmark = pytest.mark.django_db(transaction=True)


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
    assert source.last_counts["created"] == 3
    assert sources_of(source) == {
        "handbook/intro.md",
        "handbook/guides/setup.md",
        "handbook/guides/backup.md",
    }
    assert Item.objects.filter(origin=source).count() == 3

    # Nothing changed: nothing is read.
    reads: list[str] = []
    real = source_files._reader

    def counting(entry: source_files.InputFile) -> Callable[[], bytes]:
        def read() -> bytes:
            reads.append(entry.source)
            return real(entry)()

        return read

    monkeypatch.setattr(source_files, "_reader", counting)
    result = sync_source(source, embedder=embedder)
    assert (result.counts()["unchanged"], result.counts()["created"], result.counts()["updated"], reads) == (
        3,
        0,
        0,
        [],
    )

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
        "created": 1,
        "updated": 1,
        "unchanged": 0,
        "renamed": 1,
        "deleted": 1,
        "failed": 0,
        "skipped": 1,  # script.py: not a document in this library
    }
    # Only the changed files are read, each once (hashed, then ingested from the same bytes unless renamed).
    assert sorted(reads) == ["handbook/faq.md", "handbook/guides/backups.md", "handbook/guides/setup.md"]
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
    assert result.counts()["failed"] == 1 and "broken.md: empty file" in result.errors()[0]
    source.refresh_from_db()
    assert source.last_status == "partial" and "empty file" in source.last_error
    write(docs, {"broken.md": "# Fixed\n\nNow it has text.\n"})
    assert sync_source(source, embedder=embedder).counts()["created"] == 1


def test_include_patterns_are_gitignore_style(docs: Path, embedder: Embedder) -> None:
    source = add(docs, "--include=guides/", "--include=!guides/backup.md")
    assert sources_of(source) == {"handbook/guides/setup.md"}


@pytest.mark.slow  # starts a process
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
    assert result.counts()["created"] == 1 and result.counts()["deleted"] == 1  # renamed *and* edited
    assert sources_of(source) == {"project/README.md", "project/docs/running.md"}
    git(repo, "mv", "README.md", "INDEX.md")
    git(repo, "commit", "-q", "-m", "pure rename")
    assert sync_source(source, embedder=embedder).counts()["renamed"] == 1
    source.refresh_from_db()
    assert len(source.last_commit) == 40


@pytest.mark.slow  # starts a process
def test_a_scheduled_sync_runs_in_the_background_worker(docs: Path, shared_data_dir: Path) -> None:
    source = add(docs, "--every=1", "--no-sync")
    source.refresh_from_db()
    assert source.next_sync_at is not None and source.last_sync_at is None
    # Due in a minute: bring it forward so the test does not wait.
    from mnemosyne.ingestion.tasks import sync_scheduled

    Source.objects.filter(pk=source.pk).update(next_sync_at=source.next_sync_at)
    sync_scheduled.enqueue(source_uid=source.uid, due=source.next_sync_at.isoformat())
    with db_worker(shared_data_dir):
        deadline = time.monotonic() + 120
        while Source.objects.get(pk=source.pk).last_status != "ok":
            assert time.monotonic() < deadline, Source.objects.get(pk=source.pk).last_error
            time.sleep(0.3)
    source.refresh_from_db()
    assert source.last_counts["created"] == 4
    assert source.next_sync_at is not None  # the next one is queued


@pytest.mark.slow  # starts a process
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
            # Seconds when idle (a parser child starts, the file is read and embedded); the bound
            # leaves room for a machine busy with other tests.
            assert time.monotonic() - edited < 20, "not picked up within 20 s"
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


def test_the_admin_and_the_status_report_show_sources(docs: Path, admin_client: Any, tmp_path: Path) -> None:
    from mcp_server.tools.ingestion import as_report
    from mnemosyne.ingestion.status import ingestion_status

    source = add(docs, "--exclude=drafts/")
    page = admin_client.get("/admin/library/source/")
    assert page.status_code == 200 and source.uid.encode() in page.content and b"3 created" in page.content
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


def test_one_sync_of_a_source_at_a_time(docs: Path, embedder: Embedder) -> None:
    from django.db import connection

    source = add(docs, "--no-sync")
    holding, done = threading.Event(), threading.Event()

    def another_sync() -> None:  # holds the source's lock, as a sync running elsewhere does
        try:
            with advisory_lock(f"source\x00{source.pk}"):
                holding.set()
                done.wait(30)
        finally:
            connection.close()

    thread = threading.Thread(target=another_sync)
    thread.start()
    try:
        assert holding.wait(30)
        busy = sync_source(source, embedder=embedder)
        assert busy.line() == "skipped: another sync of this source is running"
        assert busy.counts()["created"] == 0 and not Item.objects.exists()
    finally:
        done.set()
        thread.join(30)
    assert sync_source(source, embedder=embedder).counts()["created"] == 4
