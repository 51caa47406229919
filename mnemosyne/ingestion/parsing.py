"""Turn an uploaded file into normalised text and a title, or say clearly why we cannot.

Every format becomes Markdown-flavoured normalised text, so the chunker finds heading paths in all
of them, plus side information: where each page starts and the images the file carries. The
per-format code lives in `mnemosyne.ingestion.parsers`; this module is the entry point.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePath

logger = logging.getLogger(__name__)

SUPPORTED_SUFFIXES = {
    ".txt": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
    ".docx": "docx",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".gif": "image",
    ".webp": "image",
}


class DocumentRejected(Exception):
    """Base for every reason a file cannot become a document; the message is for the user."""


class UnsupportedFile(DocumentRejected):
    pass


class UnreadableFile(DocumentRejected):
    pass


@dataclass(frozen=True)
class ImageAsset:
    """An image found in a document; `char_offset` is where it appears in the document's text."""

    data: bytes = field(repr=False)
    mime_type: str
    caption: str
    page: int | None
    char_offset: int


@dataclass(frozen=True)
class Heading:
    """A heading known apart from the text (a PDF's outline): where its section starts in `text`."""

    offset: int
    level: int
    title: str


@dataclass(frozen=True)
class ParsedDocument:
    title: str
    item_type: str
    text: str
    markdown: bool
    # Offset in `text` where page i+1 starts; empty when the format has no pages.
    page_starts: tuple[int, ...] = ()
    images: tuple[ImageAsset, ...] = ()
    # Sections of a paged document, in text order (Markdown-like text carries its own headings).
    headings: tuple[Heading, ...] = ()


def parse_file(path: Path) -> ParsedDocument:
    _item_type(path.name)  # refuse before reading a possibly large file we cannot use
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UnreadableFile(f"cannot read file: {exc.strerror or exc}") from exc
    return parse_bytes(data, filename=path.name)


def parse_bytes(data: bytes, *, filename: str) -> ParsedDocument:
    item_type = _item_type(filename)
    try:
        return _parse(item_type, data, filename)
    except DocumentRejected:
        raise
    except Exception as exc:
        # Parsers run third-party code over untrusted bytes: whatever it raises means this file is
        # unreadable, and must not stop the ingestion of the files around it.
        logger.warning("the %s parser failed on %r", item_type, filename, exc_info=True)
        reason = str(exc) or type(exc).__name__
        raise UnreadableFile(f"cannot parse {item_type} file: {reason}") from exc


def title_from_filename(filename: str) -> str:
    name = PurePath(filename)
    return re.sub(r"[-_\s]+", " ", name.stem).strip() or name.name


def _parse(item_type: str, data: bytes, filename: str) -> ParsedDocument:
    # Each format's library is imported on first use: they are slow to load, and most processes
    # that import this module never parse a PDF or a web page.
    if item_type == "pdf":
        from mnemosyne.ingestion.parsers import pdf

        return pdf.parse_pdf(data, filename=filename)
    if item_type == "html":
        from mnemosyne.ingestion.parsers import html

        return html.parse_html(data, filename=filename)
    if item_type == "docx":
        from mnemosyne.ingestion.parsers import docx

        return docx.parse_docx(data, filename=filename)
    if item_type == "image":
        from mnemosyne.ingestion.parsers import image

        return image.parse_image(data, filename=filename)
    from mnemosyne.ingestion.parsers import text

    return text.parse_text(data, filename=filename, markdown=item_type == "markdown")


def _item_type(filename: str) -> str:
    suffix = PurePath(filename).suffix.lower()
    if not suffix:
        raise UnsupportedFile("unsupported file type (no file extension)")
    if suffix not in SUPPORTED_SUFFIXES:
        raise UnsupportedFile(f"unsupported file type '{suffix}'")
    return SUPPORTED_SUFFIXES[suffix]
