"""Sources kept in sync from elsewhere: an S3 prefix (moto's server over HTTP) synced by ETag, a
bucket that cannot be listed; a website crawled within its prefix, depth and robots.txt, or read
from its sitemap with conditional requests, and refused on a private address by default."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.core.management import CommandError

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.sync.runs import sync_source
from mnemosyne.search.service import SearchRequest, search
from tests.ingestion.source_helpers import add_location, sources_of
from tests.servers import FAKE_AWS_ENV, free_port

pytestmark = pytest.mark.django_db(transaction=True)


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
    assert (
        result.counts()["updated"],
        result.counts()["renamed"],
        result.counts()["created"],
        result.counts()["deleted"],
        result.counts()["unchanged"],
    ) == (
        1,
        1,
        0,
        0,
        0,
    )
    assert sources_of(source) == {"team-docs/wiki/tides.md", "team-docs/wiki/ops/backups.md"}


def test_an_s3_bucket_that_cannot_be_listed_makes_the_source_unavailable(s3: Any) -> None:
    with pytest.raises(CommandError, match=r"S3 refused listing s3://no-such-bucket/x \(NoSuchBucket\)"):
        add_location("s3://no-such-bucket/x")


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
    assert result.counts()["failed"] == 1 and f"{website.base}/docs/tides.html" in sources_of(
        source
    )  # kept: fetch failed
    website.html("/docs/index.html", "Harbour docs", "Start here.", ["/docs/ops/locks.html"])
    result = sync_source(source, embedder=embedder)
    assert result.counts()["deleted"] == 1 and f"{website.base}/docs/tides.html" not in sources_of(source)


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
    assert result.counts()["unchanged"] == 2 and result.counts()["created"] == result.counts()["updated"] == 0
    assert sorted(code for path, code in website.requests if path.endswith(".html")) == [304, 304]


def test_a_website_on_a_private_address_is_refused_by_default(website: Website, settings: Any) -> None:
    settings.INGEST_ALLOW_PRIVATE_URLS = False
    with pytest.raises(CommandError, match="private or loopback address"):
        add_location(f"{website.base}/docs/index.xml")
