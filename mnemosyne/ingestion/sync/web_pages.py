"""A website source's pages: those its sitemap lists (sitemap.xml, and the sitemaps a sitemap index
names), or those a crawl reaches from the start page — links followed breadth-first up to
`max_depth`, at most `max_pages` pages — always under the start URL's directory (the prefix), never
what robots.txt disallows for us. Pages are fetched through fetch.py (its size, time, redirect and
private-address limits). A sitemap's pages are fetched conditionally (ETag / Last-Modified), so an
unchanged page costs a 304; a crawl fetches every page it walks, since it needs the links."""

from __future__ import annotations

import functools
import hashlib
import urllib.robotparser
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit

from bs4 import BeautifulSoup
from lxml import etree

from mnemosyne.ingestion.fetch import Fetched, FetchFailed, NotModified, fetch_url
from mnemosyne.ingestion.inputs import Skipped
from mnemosyne.ingestion.sync.listings import Listed, Listing, SourceUnavailable

USER_AGENT = "Mnemosyne"
MAX_SITEMAPS = 20
_SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def web_pages(
    location: str,
    *,
    max_pages: int,
    max_depth: int,
    manifest: dict[str, dict[str, str]],
    keep: Callable[[str], bool],
) -> Listing:
    prefix = location if location.endswith("/") else location.rsplit("/", 1)[0] + "/"
    robots = _robots(location)
    listing = Listing(files={}, skipped=[])
    site = _Site(prefix, robots, keep, listing)
    if urlsplit(location).path.endswith(".xml"):
        for url in site.sitemap_urls(location, max_pages):
            site.conditional(url, manifest.get(url, {}))
    else:
        site.crawl(location, max_pages=max_pages, max_depth=max_depth)
    return listing


class _Site:
    def __init__(
        self,
        prefix: str,
        robots: urllib.robotparser.RobotFileParser,
        keep: Callable[[str], bool],
        listing: Listing,
    ) -> None:
        self.prefix, self.robots, self.keep, self.listing = prefix, robots, keep, listing

    def allowed(self, url: str) -> str:
        """Why the URL is passed over ("" when it is not)."""
        if not url.startswith(self.prefix):
            return f"outside the source's prefix {self.prefix}"
        if not self.robots.can_fetch(USER_AGENT, url):
            return "disallowed by robots.txt"
        if not self.keep(url[len(self.prefix) :]):
            return "excluded by the source's patterns"
        return ""

    def sitemap_urls(self, sitemap: str, limit: int) -> Iterator[str]:
        seen_maps: set[str] = set()
        pending = deque([sitemap])
        found: set[str] = set()
        while pending and len(seen_maps) < MAX_SITEMAPS:
            current = pending.popleft()
            if current in seen_maps:
                continue  # a sitemap index that names itself, or a loop of them
            seen_maps.add(current)
            try:
                fetched = fetch_url(current, raw=True)
                root = etree.fromstring(
                    fetched.data, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
                )
            except (FetchFailed, etree.XMLSyntaxError) as exc:
                if current == sitemap:
                    raise SourceUnavailable(f"the sitemap {sitemap} cannot be read: {exc}") from None
                self.listing.skipped.append(Skipped(Path(current), f"sitemap not read: {exc}"))
                continue
            for loc in root.iter(f"{_SITEMAP_NS}loc", "loc"):
                url = (loc.text or "").strip()
                if root.tag.endswith("sitemapindex"):
                    pending.append(url)
                    continue
                reason = self.allowed(url)
                if reason:
                    self.listing.skipped.append(Skipped(Path(url), reason))
                elif url not in found and len(found) < limit:
                    found.add(url)
                    yield url

    def conditional(self, url: str, before: dict[str, str]) -> None:
        """Fetch a page unless it is unchanged since the fingerprint last seen (an ETag or date)."""
        fingerprint = before.get("f", "")
        headers = {}
        if fingerprint.startswith("etag:"):
            headers["If-None-Match"] = fingerprint[len("etag:") :]
        elif fingerprint.startswith("date:"):
            headers["If-Modified-Since"] = fingerprint[len("date:") :]
        try:
            fetched = fetch_url(url, headers=headers)
        except NotModified:
            self.listing.files[url] = Listed(url, fingerprint, _gone_away, filename="")
            return
        except FetchFailed as exc:
            self.listing.skipped.append(Skipped(Path(url), str(exc)))
            self.listing.unreadable.add(url)
            return
        self._add(url, fetched)

    def crawl(self, start: str, *, max_pages: int, max_depth: int) -> None:
        queue = deque([(start, 0)])
        seen = {start}
        while queue and len(self.listing.files) < max_pages:
            url, depth = queue.popleft()
            reason = self.allowed(url)
            if reason:
                self.listing.skipped.append(Skipped(Path(url), reason))
                continue
            try:
                fetched = fetch_url(url)
            except FetchFailed as exc:
                self.listing.skipped.append(Skipped(Path(url), str(exc)))
                self.listing.unreadable.add(url)
                continue
            self._add(url, fetched)
            if depth >= max_depth or not fetched.filename.endswith((".html", ".htm")):
                continue
            for link in _links(fetched):
                if link not in seen and link.startswith(self.prefix):
                    seen.add(link)
                    queue.append((link, depth + 1))

    def _add(self, url: str, fetched: Fetched) -> None:
        if fetched.etag:
            fingerprint = f"etag:{fetched.etag}"
        elif fetched.last_modified:
            fingerprint = f"date:{fetched.last_modified}"
        else:
            fingerprint = "sha256:" + hashlib.sha256(fetched.data).hexdigest()
        self.listing.files[url] = Listed(
            url, fingerprint, functools.partial(bytes, fetched.data), filename=fetched.filename
        )


def _gone_away() -> bytes:
    # A page that answered 304 is read only if its item is missing: then fetch it again fully.
    raise OSError("unchanged (HTTP 304) but its item is missing; it is fetched again at the next sync")


def _links(fetched: Fetched) -> Iterator[str]:
    soup = BeautifulSoup(fetched.data, "lxml")
    for anchor in soup.find_all("a", href=True):
        href = str(anchor["href"]).strip()
        if href and not href.startswith(("mailto:", "javascript:", "#")):
            yield urldefrag(urljoin(fetched.final_url, href)).url


def _robots(location: str) -> urllib.robotparser.RobotFileParser:
    parts = urlsplit(location)
    robots = urllib.robotparser.RobotFileParser()
    try:
        fetched = fetch_url(f"{parts.scheme}://{parts.netloc}/robots.txt", raw=True)
        robots.parse(fetched.data.decode("utf-8", errors="replace").splitlines())
    except FetchFailed:
        robots.parse([])  # no robots.txt: everything allowed
    return robots
