"""What a parser produces: a document's normalised text, its title, pages, sections and images.

Every format becomes Markdown-flavoured normalised text, so the chunker finds heading paths in all
of them, plus side information: where each page starts and the images the file carries. Parsers
(`parsers/`) build these; chunk planning reads them. Or a parser says clearly why it cannot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath


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


def title_from_filename(filename: str) -> str:
    name = PurePath(filename)
    return re.sub(r"[-_\s]+", " ", name.stem).strip() or name.name
