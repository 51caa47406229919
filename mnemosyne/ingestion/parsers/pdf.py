"""PDF files through pypdf: text page by page, where each page starts, the outline and the embedded images.

A PDF's text carries no reliable heading markup, so it is plain (not Markdown). Its outline (the
bookmarks most producers write) names the sections: each entry becomes a Heading at the place its
title appears on its destination page (or at that page's start), so chunks get a section path.
A PDF without an outline gives chunks no section path.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator, Sequence

from pypdf import PageObject, PasswordType, PdfReader
from pypdf.errors import DependencyError, PdfReadError
from pypdf.generic import Destination, DictionaryObject

from mnemosyne.ingestion.chunking import normalise_text
from mnemosyne.ingestion.documents import (
    Heading,
    ImageAsset,
    ParsedDocument,
    UnreadableFile,
    title_from_filename,
)
from mnemosyne.ingestion.parsers.image_data import check_dimensions, embedded_image

logger = logging.getLogger(__name__)

MAX_PDF_PAGES = 5000
PAGE_SEPARATOR = "\n\n"
# Without a figure caption, an image is described by the opening of its page.
FALLBACK_CAPTION_CHARS = 200

_FIGURE_LINE = re.compile(r"^(?:Figure|FIGURE|Fig\.)\s*\S.*$", re.MULTILINE)


def parse_pdf(data: bytes, *, filename: str) -> ParsedDocument:
    reader = _open(data)
    if len(reader.pages) > MAX_PDF_PAGES:
        logger.warning("%s has %d pages; reading the first %d", filename, len(reader.pages), MAX_PDF_PAGES)
    parts: list[str] = []
    page_texts: list[str] = []
    page_starts: list[int] = []
    images: list[ImageAsset] = []
    length = 0
    for index in range(min(len(reader.pages), MAX_PDF_PAGES)):
        page = reader.pages[index]
        page_text = normalise_text(page.extract_text() or "")
        if page_text and parts:
            length += len(PAGE_SEPARATOR)
        # An empty page starts where the next page's text will; a chunk is never placed on it.
        page_starts.append(length)
        page_texts.append(page_text)
        images.extend(_page_images(page, number=index + 1, page_text=page_text, page_start=length))
        if page_text:
            parts.append(page_text)
            length += len(page_text)
    text = PAGE_SEPARATOR.join(parts)
    if not text and not images:
        raise UnreadableFile("no extractable text (scanned PDF?)")
    return ParsedDocument(
        title=_metadata_title(reader) or title_from_filename(filename),
        item_type="pdf",
        text=text,
        markdown=False,
        page_starts=tuple(page_starts),
        images=tuple(images),
        headings=_outline_headings(reader, page_starts, page_texts),
    )


def _open(data: bytes) -> PdfReader:
    try:
        reader = PdfReader(io.BytesIO(data))
    except PdfReadError as exc:
        raise UnreadableFile(f"not a readable PDF: {exc}") from exc
    if reader.is_encrypted:
        # Many PDFs are encrypted only to set permissions and open with an empty password.
        try:
            opened = reader.decrypt("")
        except (DependencyError, NotImplementedError, PdfReadError) as exc:
            raise UnreadableFile(f"encrypted PDF that cannot be opened: {exc}") from exc
        if opened == PasswordType.NOT_DECRYPTED:
            raise UnreadableFile("encrypted PDF (it needs a password to open)")
    return reader


def _outline_headings(
    reader: PdfReader, page_starts: list[int], page_texts: list[str]
) -> tuple[Heading, ...]:
    """The outline's entries as headings in text order; () when there is none or it cannot be read."""
    try:
        entries = list(_walk_outline(reader, reader.outline, level=1))
    except Exception:
        # A damaged outline costs the section paths, never the text.
        logger.warning("cannot read the PDF's outline", exc_info=True)
        return ()
    headings = []
    for level, title, page in entries:
        if not 0 <= page < len(page_starts):
            continue
        found = _find_title(page_texts[page], title)
        headings.append(Heading(offset=page_starts[page] + max(found, 0), level=level, title=title))
    # Stable: entries at one offset keep their outline order (a chapter before its first section).
    return tuple(sorted(headings, key=lambda heading: heading.offset))


def _walk_outline(
    reader: PdfReader, outline: Sequence[object], *, level: int
) -> Iterator[tuple[int, str, int]]:
    """(level, title, 0-based page) for each outline entry, depth first; a nested list holds the
    children of the entry before it."""
    for entry in outline:
        if isinstance(entry, list):
            yield from _walk_outline(reader, entry, level=level + 1)
        elif isinstance(entry, Destination):
            title = " ".join(str(entry.title or "").replace("\x00", "").split())
            page = reader.get_destination_page_number(entry)
            if title and page is not None:
                yield level, title, page


def _find_title(page_text: str, title: str) -> int:
    """Where a heading's title starts on its page (whitespace and case aside), or -1."""
    words = [re.escape(word) for word in title.split()]
    if not words:
        return -1
    match = re.search(r"\s+".join(words), page_text, re.IGNORECASE)
    return match.start() if match else -1


def _metadata_title(reader: PdfReader) -> str:
    title = reader.metadata.title if reader.metadata is not None else None
    return " ".join(title.replace("\x00", "").split()) if isinstance(title, str) else ""


def _page_images(page: PageObject, *, number: int, page_text: str, page_start: int) -> list[ImageAsset]:
    caption, caption_offset = _caption(page_text)
    assets: list[ImageAsset] = []
    page_images = page.images
    try:
        # Iterating `page.images` decodes every image; its keys let us check the size first.
        keys = page_images.keys()
    except Exception:
        logger.warning("cannot list the images on page %d", number, exc_info=True)
        return []
    for key in keys:
        try:
            check_dimensions(*_declared_size(page, key))  # before pypdf decodes the pixels
            data = page_images[key].data
        except UnreadableFile as exc:
            logger.warning("skipping image %s on page %d: %s", key, number, exc)
            continue
        except Exception:
            # pypdf raises many kinds of error on a damaged or exotic image; the text still counts.
            logger.warning(
                "skipping image %s on page %d that pypdf cannot decode", key, number, exc_info=True
            )
            continue
        asset = embedded_image(data, caption=caption, page=number, char_offset=page_start + caption_offset)
        if asset is not None:
            assets.append(asset)
    return assets


def _caption(page_text: str) -> tuple[str, int]:
    """The page's first figure caption line and its offset, else the opening of the page."""
    match = _FIGURE_LINE.search(page_text)
    if match is not None:
        return match.group(0), match.start()
    return page_text[:FALLBACK_CAPTION_CHARS], 0


def _declared_size(page: PageObject, key: str | list[str]) -> tuple[int, int]:
    """Width and height an image XObject declares, or (0, 0) when unknown (inline images)."""
    node: object = page
    for name in [key] if isinstance(key, str) else key:
        resources = _lookup(node, "/Resources")
        node = _lookup(_lookup(resources, "/XObject"), name)
    width, height = _lookup(node, "/Width"), _lookup(node, "/Height")
    if isinstance(width, int) and isinstance(height, int):
        return width, height
    return 0, 0


def _lookup(node: object, name: str) -> object:
    if not isinstance(node, DictionaryObject):
        return None
    value = node.get(name)
    return value.get_object() if value is not None else None
