"""Fetching an http(s) URL to ingest: bounded in time, size and redirects, typed by its Content-Type."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

import httpx
from django.conf import settings

from mnemosyne.ingestion import formats
from mnemosyne.lib.addresses import PrivateAddress, check_public_host

MAX_REDIRECTS = 5
# Item.source holds the URL.
MAX_URL_LENGTH = 2000

_ACCEPT = ", ".join([*(mime for entry in formats.FORMATS for mime in entry.mime_types), "*/*;q=0.1"])
# Types that say nothing about the content: the URL's suffix decides.
_GENERIC_TYPES = {"", "application/octet-stream", "binary/octet-stream", "application/unknown"}


class FetchFailed(Exception):
    """The URL could not be fetched as a document; the message says why, for the user."""


@dataclass(frozen=True)
class Fetched:
    url: str
    final_url: str
    content_type: str
    # A file name whose suffix picks the parser, e.g. "report.pdf" ("" for a raw fetch of another type).
    filename: str
    data: bytes
    # The validators to send next time (If-None-Match / If-Modified-Since), when the server gave any.
    etag: str = ""
    last_modified: str = ""


class NotModified(Exception):
    """A conditional fetch found the resource unchanged (HTTP 304)."""


def check_url(url: str) -> None:
    """Refuse a URL we would never fetch, before any network traffic."""
    if len(url) > MAX_URL_LENGTH:
        raise FetchFailed(f"URL is longer than {MAX_URL_LENGTH} characters")
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise FetchFailed(f"unsupported URL scheme {parts.scheme!r} (only http and https are fetched)")
    if not parts.hostname:
        raise FetchFailed("URL has no host")


def fetch_url(
    url: str,
    *,
    timeout: float | None = None,
    max_bytes: int | None = None,
    headers: dict[str, str] | None = None,
    raw: bool = False,
) -> Fetched:
    """GET `url`, following at most MAX_REDIRECTS redirects; raise FetchFailed with the reason.

    `headers` are sent too (conditional ones: a 304 raises NotModified); `raw` accepts any content
    type (a sitemap, robots.txt), with no file name."""
    check_url(url)
    timeout = settings.INGEST_FETCH_TIMEOUT if timeout is None else timeout
    max_bytes = settings.INGEST_MAX_FILE_BYTES if max_bytes is None else max_bytes
    # httpx's timeout bounds each connect/read; the deadline bounds a body that trickles in.
    deadline = time.monotonic() + timeout
    try:
        with httpx.Client(follow_redirects=False, timeout=timeout) as client:
            request = client.build_request("GET", url, headers={"Accept": _ACCEPT, **(headers or {})})
            response = _follow(client, request)
            try:
                if response.status_code == 304:
                    raise NotModified(url)
                if not response.is_success:
                    raise FetchFailed(f"HTTP {response.status_code} {response.reason_phrase}".strip())
                content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
                final_url = str(response.url)
                filename = "" if raw else _filename(final_url, content_type)
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise FetchFailed(_too_large(f"{declared} bytes", max_bytes))
                data = _read_body(response, max_bytes=max_bytes, deadline=deadline, timeout=timeout)
            finally:
                response.close()
    except httpx.TooManyRedirects:
        raise FetchFailed(f"more than {MAX_REDIRECTS} redirects") from None
    except httpx.TimeoutException:
        raise FetchFailed(f"timed out after {timeout:g} s (INGEST_FETCH_TIMEOUT)") from None
    except httpx.UnsupportedProtocol as exc:
        raise FetchFailed(f"unsupported URL scheme in a redirect: {exc}") from None
    except httpx.ConnectError as exc:
        raise FetchFailed(f"cannot connect to {urlsplit(url).netloc}: {exc or 'connection failed'}") from None
    except httpx.HTTPError as exc:
        raise FetchFailed(f"request failed: {type(exc).__name__}: {exc}") from None
    return Fetched(
        url=url,
        final_url=final_url,
        content_type=content_type,
        filename=filename,
        data=data,
        etag=response.headers.get("etag", ""),
        last_modified=response.headers.get("last-modified", ""),
    )


def _follow(client: httpx.Client, request: httpx.Request) -> httpx.Response:
    """Send `request`, following redirects one by one: each hop's scheme and host are checked
    before it is requested (a public URL must not redirect to a private address)."""
    for _ in range(MAX_REDIRECTS + 1):
        _check_target(request.url)
        response = client.send(request, stream=True)
        if not response.is_redirect:
            return response
        response.close()
        following = response.next_request
        if following is None:
            return response
        request = following
    raise httpx.TooManyRedirects("too many redirects", request=request)


def _check_target(url: httpx.URL) -> None:
    if url.scheme not in ("http", "https"):
        raise FetchFailed(f"unsupported URL scheme in a redirect: {url.scheme!r}")
    if settings.INGEST_ALLOW_PRIVATE_URLS:
        return
    try:
        check_public_host(url.host, url.port or (443 if url.scheme == "https" else 80))
    except PrivateAddress as exc:
        raise FetchFailed(f"{exc}; refused (INGEST_ALLOW_PRIVATE_URLS=true allows it)") from None
    except OSError:
        raise FetchFailed(f"cannot resolve {url.host}") from None


def _read_body(response: httpx.Response, *, max_bytes: int, deadline: float, timeout: float) -> bytes:
    body = bytearray()
    for piece in response.iter_bytes():
        body += piece
        # Checked as the body arrives: a missing or false Content-Length cannot make us read more.
        if len(body) > max_bytes:
            raise FetchFailed(_too_large(f"more than {max_bytes} bytes", max_bytes))
        if time.monotonic() > deadline:
            raise FetchFailed(f"timed out after {timeout:g} s (INGEST_FETCH_TIMEOUT)")
    return bytes(body)


def _too_large(size: str, max_bytes: int) -> str:
    return f"response of {size} is over INGEST_MAX_FILE_BYTES ({max_bytes})"


def _filename(url: str, content_type: str) -> str:
    """A name for the parser: the URL's last path segment, with the suffix the content type implies."""
    path = PurePosixPath(unquote(urlsplit(url).path))
    stem = path.stem or urlsplit(url).hostname or "document"
    url_suffix = path.suffix.lower()
    by_url = formats.by_suffix(url_suffix)
    by_type = formats.by_mime_type(content_type)
    # Markdown is often served as text/plain (raw.githubusercontent.com does).
    if content_type == "text/plain" and by_url is not None and by_url.item_type == "markdown":
        by_type = by_url
    if (
        by_type is None
        and by_url is not None
        and (content_type.startswith("image/") or content_type in _GENERIC_TYPES)
    ):
        by_type = by_url
    if by_type is None and not content_type:
        raise FetchFailed("no Content-Type, and no supported file extension in the URL")
    if by_type is None:
        raise FetchFailed(f"unsupported content type {content_type!r}")
    # Keep a matching suffix as written (".htm", ".jpeg"); otherwise the content type's.
    if by_url is not None and by_url.item_type == by_type.item_type:
        return f"{stem}{url_suffix}"
    return f"{stem}{by_type.suffixes[0]}"
