"""What a parser produces: a document's normalised text, its title, pages, sections and images.

Every format becomes Markdown-flavoured normalised text, so the chunker finds heading paths in all
of them, plus side information: where each page starts and the images the file carries. Parsers
(`parsers/`) build these; chunk planning reads them. Or a parser says clearly why it cannot.
A parsed document goes to ingest as a DocumentInput.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Mapping
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
    """A heading known apart from the text (a PDF's): where its section starts in `text`, and where
    its printed heading ends (`end` == `offset`, or -1, when the title is not printed there)."""

    offset: int
    level: int
    title: str
    end: int = -1


@dataclass(frozen=True)
class TextBox:
    """Where a stretch of the document's text (`start` to `end`, one line of a page) was printed.

    The box is in PDF points with the origin at the page's bottom left; `edges`, when known, holds
    len + 1 horizontal boundaries of its characters (for the box of part of the line); an OCR'd
    line carries the recogniser's confidence.
    """

    start: int
    end: int
    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    edges: array[float] | None = field(default=None, compare=False, repr=False)
    confidence: float | None = None

    def span(self, start: int, end: int) -> tuple[float, float]:
        """The x extent of the characters start..end (document offsets) within this box."""
        if self.edges is None or len(self.edges) != self.end - self.start + 1:
            return self.x0, self.x1
        first = max(start, self.start) - self.start
        last = max(first, min(end, self.end) - self.start)
        # Characters are not always in x order within a line (a tag set at the margin mid-line).
        stretch = self.edges[first : last + 1]
        return float(min(stretch)), float(max(stretch))


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
    # Where each line of a paged document was printed (PDF): pages, highlight boxes, OCR confidence.
    boxes: tuple[TextBox, ...] = ()
    # Pages read by OCR, and those of them where OCR found no text (1-based).
    ocr_pages: tuple[int, ...] = ()
    unreadable_pages: tuple[int, ...] = ()
    # Seconds the reading took: "parse" (OCR left out) and "ocr" (parsing.parse_bytes).
    seconds: Mapping[str, float] = field(default_factory=dict, compare=False)


# Titles that name a file, not a document: an accession number or a hash, a bare number,
# "Untitled", "Microsoft Word - notes.docx", a file name.
_FILE_LIKE_TITLE = re.compile(
    r"^(?:[\dA-Fa-f_-]{12,}|\d[\d\s._/-]*|untitled|document\d*|microsoft (?:word|powerpoint|excel)\b.*"
    r"|.*\.(?:docx?|pdf|pptx?|xlsx?|indd|qxd))$",
    re.IGNORECASE,
)


def names_a_file(title: str) -> bool:
    """Whether a title (a PDF's metadata title, say) names a file rather than the document."""
    title = " ".join(title.split())
    return bool(_FILE_LIKE_TITLE.match(title)) or sum(char.isalpha() for char in title) < 4


def title_from_filename(filename: str) -> str:
    name = PurePath(filename)
    return re.sub(r"[-_\s]+", " ", name.stem).strip() or name.name


@dataclass(frozen=True)
class DocumentInput:
    """A parsed document to ingest as the item `source` of a collection (ingestion/pipeline.py)."""

    source: str
    parsed: ParsedDocument
    digest: str
    metadata: dict[str, object] = field(default_factory=dict)
    # What a person says the document is (identity.parse_given: title, organisation, doc_type,
    # date, period); the rest is read from the document.
    given: Mapping[str, object] = field(default_factory=dict)
    # The bytes it was parsed from, kept beside its chunks (keys.original_key); empty: not kept.
    original: bytes = b""
    # Seconds spent getting those bytes ("read": a file, a URL, an object), as the door timed it.
    read_seconds: float | None = None
