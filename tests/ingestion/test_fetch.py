"""Fetching URLs against a real HTTP server on 127.0.0.1: types, limits, redirects, failures."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from django.conf import settings as django_settings

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion import fetch
from mnemosyne.ingestion.fetch import FetchFailed, check_url, fetch_url
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.lib import addresses
from mnemosyne.library.models import Chunk, EmbeddingStatus, Item
from mnemosyne.library.services import ensure_collection, ensure_library
from tests.documents import pdf_bytes
from tests.json_server import QuietServer

Handler = Callable[[BaseHTTPRequestHandler], None]

PAGE = b"""<html><head><title>Harbour Tides</title></head><body><main>
<h1>Harbour Tides</h1><p>The harbour floods twice a day when the spring tide meets the river.</p>
<h2>Moorings</h2><p>Boats on the outer moorings must be checked before the evening tide.</p>
</main></body></html>"""


class Site:
    """Routes served by a ThreadingHTTPServer; `release` unblocks handlers waiting on it."""

    def __init__(self) -> None:
        self.routes: dict[str, Handler] = {}
        self.release = threading.Event()
        site = self

        class RequestHandler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                route = site.routes.get(self.path)
                if route is None:
                    self.send_error(404, "Not Found")
                else:
                    route(self)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = QuietServer(("127.0.0.1", 0), RequestHandler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def url(self, path: str) -> str:
        return f"{self.base}{path}"

    def serve(self, path: str, body: bytes, content_type: str, *, length: bool = True) -> None:
        def handler(request: BaseHTTPRequestHandler) -> None:
            request.send_response(200)
            if content_type:
                request.send_header("Content-Type", content_type)
            if length:
                request.send_header("Content-Length", str(len(body)))
            request.end_headers()
            request.wfile.write(body)

        self.routes[path] = handler

    def redirect(self, path: str, target: str) -> None:
        def handler(request: BaseHTTPRequestHandler) -> None:
            request.send_response(302)
            request.send_header("Location", target)
            request.send_header("Content-Length", "0")
            request.end_headers()

        self.routes[path] = handler


@pytest.fixture
def site() -> Iterator[Site]:
    site = Site()
    thread = threading.Thread(target=site.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        site.release.set()
        site.server.shutdown()
        site.server.server_close()
        thread.join(timeout=10)


@pytest.fixture
def refused_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Bound and closed, never listening: connecting is refused.
    return f"http://127.0.0.1:{port}/page.html"


def test_it_names_an_html_page_by_its_content_type(site: Site) -> None:
    site.serve("/guides/tides", PAGE, "text/html; charset=utf-8")

    fetched = fetch_url(site.url("/guides/tides"))

    assert fetched.filename == "tides.html"
    assert fetched.content_type == "text/html"
    assert fetched.data == PAGE


@pytest.mark.django_db
def test_it_ingests_an_html_page_under_its_url(site: Site, embedder: Embedder) -> None:
    site.serve("/tides", PAGE, "text/html")
    collection = ensure_collection(library=ensure_library(name="Web"), name="pages")
    url = site.url("/tides")

    summary = ingest_paths([url], collection=collection, report=lambda line: None, embedder=embedder)

    assert summary.counts()["created"] == 1
    item = Item.objects.get(collection=collection, source=url)
    assert item.title == "Harbour Tides"
    assert item.embedding_status == EmbeddingStatus.COMPLETE
    assert item.metadata["content_type"] == "text/html"
    assert "moorings" in " ".join(Chunk.objects.filter(item=item).values_list("text_preview", flat=True))
    again = ingest_paths([url], collection=collection, report=lambda line: None, embedder=embedder)
    assert again.counts()["unchanged"] == 1


@pytest.mark.django_db
def test_it_ingests_a_pdf_recognised_by_content_type_alone(site: Site, embedder: Embedder) -> None:
    body = pdf_bytes([["Lighthouse keepers log the weather every four hours."]], title="Keeper Log")
    site.routes["/download?id=7"] = lambda request: _send(request, body, "application/pdf")
    collection = ensure_collection(library=ensure_library(name="Web"), name="pdfs")
    url = site.url("/download?id=7")

    summary = ingest_paths([url], collection=collection, report=lambda line: None, embedder=embedder)

    assert summary.counts()["created"] == 1, summary.results
    item = Item.objects.get(source=url)
    assert item.item_type == "pdf"
    assert Chunk.objects.filter(item=item, page=1).exists()


def test_a_missing_page_fails_with_the_status(site: Site) -> None:
    with pytest.raises(FetchFailed, match="HTTP 404 Not Found"):
        fetch_url(site.url("/nowhere.html"))


def test_a_server_slower_than_the_timeout_fails(site: Site, settings) -> None:
    settings.INGEST_FETCH_TIMEOUT = 0.3

    def slow(request: BaseHTTPRequestHandler) -> None:
        site.release.wait(30)
        _send(request, PAGE, "text/html")

    site.routes["/slow.html"] = slow

    with pytest.raises(FetchFailed, match=r"timed out after 0.3 s"):
        fetch_url(site.url("/slow.html"))


def test_a_declared_length_over_the_cap_fails_before_the_body_is_read(site: Site) -> None:
    def huge(request: BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Type", "text/html")
        request.send_header("Content-Length", str(10**9))
        request.end_headers()
        # The body never comes: reading it would time out instead of failing on the header.
        site.release.wait(30)

    site.routes["/huge.html"] = huge

    with pytest.raises(FetchFailed, match=r"1000000000 bytes is over INGEST_MAX_FILE_BYTES \(1000\)"):
        fetch_url(site.url("/huge.html"), max_bytes=1000, timeout=5)


def test_an_undeclared_body_over_the_cap_stops_being_read(site: Site) -> None:
    def endless(request: BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Type", "text/plain")
        request.end_headers()
        request.wfile.write(b"x" * 5000)
        request.wfile.flush()
        # Never closes: only the size check can end the read before the timeout.
        site.release.wait(30)

    site.routes["/endless.txt"] = endless

    with pytest.raises(FetchFailed, match=r"more than 1000 bytes is over INGEST_MAX_FILE_BYTES"):
        fetch_url(site.url("/endless.txt"), max_bytes=1000, timeout=5)


def test_it_follows_a_redirect_chain_and_keeps_the_given_url(site: Site) -> None:
    site.serve("/final.md", b"# Final\n\nArrived.\n", "text/markdown")
    site.redirect("/r1", "/final.md")
    site.redirect("/r2", site.url("/r1"))
    site.redirect("/r3", "/r2")

    fetched = fetch_url(site.url("/r3"))

    assert fetched.url == site.url("/r3")
    assert fetched.final_url == site.url("/final.md")
    assert fetched.filename == "final.md"


def test_more_than_five_redirects_fail(site: Site) -> None:
    site.serve("/end.txt", b"end", "text/plain")
    # /hopN is N redirects away from /end.txt.
    site.redirect("/hop1", "/end.txt")
    for hop in range(2, 7):
        site.redirect(f"/hop{hop}", f"/hop{hop - 1}")

    assert fetch_url(site.url("/hop5")).final_url == site.url("/end.txt")
    with pytest.raises(FetchFailed, match="more than 5 redirects"):
        fetch_url(site.url("/hop6"))


def test_a_refused_connection_fails_clearly(refused_url: str) -> None:
    with pytest.raises(FetchFailed, match=r"cannot connect to 127\.0\.0\.1:\d+"):
        fetch_url(refused_url)


def test_an_unsupported_content_type_fails(site: Site) -> None:
    site.serve("/archive.zip", b"PK\x03\x04", "application/zip")

    with pytest.raises(FetchFailed, match="unsupported content type 'application/zip'"):
        fetch_url(site.url("/archive.zip"))


def test_a_body_without_a_type_or_a_known_extension_fails(site: Site) -> None:
    site.serve("/blob", b"content", "")

    with pytest.raises(FetchFailed, match="no Content-Type, and no supported file extension"):
        fetch_url(site.url("/blob"))


@pytest.mark.parametrize(
    ("path", "content_type", "filename"),
    [
        ("/README.md", "text/plain; charset=utf-8", "README.md"),
        ("/notes.txt", "application/octet-stream", "notes.txt"),
        ("/photo.jpeg", "image/jpeg", "photo.jpeg"),
        ("/photo", "image/png", "photo.png"),
        ("/page.htm", "text/html", "page.htm"),
        ("/", "text/html", "127.0.0.1.html"),
        ("/untyped.md", "", "untyped.md"),
    ],
)
def test_the_suffix_follows_the_content_type_or_else_the_url(
    site: Site, path: str, content_type: str, filename: str
) -> None:
    site.serve(path, b"content", content_type)

    assert fetch_url(site.url(path)).filename == filename


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://example.com/a.pdf", "unsupported URL scheme 'ftp'"),
        ("file:///etc/passwd", "unsupported URL scheme 'file'"),
        ("http:///nohost", "URL has no host"),
        ("https://example.com/" + "a" * 2000, "longer than 2000"),
    ],
)
def test_urls_we_would_never_fetch_are_refused_up_front(url: str, reason: str) -> None:
    with pytest.raises(FetchFailed, match=reason):
        check_url(url)


def _send(request: BaseHTTPRequestHandler, body: bytes, content_type: str) -> None:
    request.send_response(200)
    request.send_header("Content-Type", content_type)
    request.send_header("Content-Length", str(len(body)))
    request.end_headers()
    request.wfile.write(body)


@pytest.fixture
def guarded(settings: Any) -> None:
    settings.INGEST_ALLOW_PRIVATE_URLS = False


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/doc.md",
        "http://localhost/doc.md",
        "http://[::1]/doc.md",
        "http://10.0.0.7/doc.md",
        "http://192.168.1.1/doc.md",
        "http://169.254.169.254/latest/meta-data/",  # a cloud metadata service
    ],
)
def test_a_url_to_this_machine_or_its_network_is_refused(guarded: None, url: str) -> None:
    with pytest.raises(FetchFailed, match=r"private or loopback address.*INGEST_ALLOW_PRIVATE_URLS"):
        fetch_url(url)


def test_a_redirect_to_a_private_address_is_refused_before_it_is_followed(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The test server on 127.0.0.1 stands in for a public host (the setting lets the first hop
    # through); the guard is on for every other host, like the metadata address it redirects to.
    site.redirect("/go", "http://169.254.169.254/latest/")
    real = addresses.check_public_host
    asked: list[str] = []

    def check(host: str, port: int = 443) -> None:
        asked.append(host)
        if host != "127.0.0.1":
            real(host, port)

    monkeypatch.setattr(fetch, "check_public_host", check)
    monkeypatch.setattr(django_settings, "INGEST_ALLOW_PRIVATE_URLS", False)
    with pytest.raises(FetchFailed, match=r"169\.254\.169\.254 resolves to a private or loopback address"):
        fetch_url(site.url("/go"))
    assert asked == ["127.0.0.1", "169.254.169.254"]
