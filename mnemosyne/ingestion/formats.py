"""The one table of file formats: suffixes, content types, upload MIME types and parsers all come from it.

Adding a format is one parser module in `parsers/` (a function `parse(data, *, filename)` returning
a ParsedDocument) and one row here. Directory walks accept the suffixes, URL fetches the content
types, `upsert_item` the MIME types (its description lists them), and `parsing` picks the parser.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath

from mnemosyne.ingestion.documents import ParsedDocument


@dataclass(frozen=True)
class Format:
    # What the item is recorded as (Item.item_type).
    item_type: str
    # File name suffixes, lowercase; the first is the one a fetched URL is named with.
    suffixes: tuple[str, ...]
    # Content types; the first is the one upsert_item documents, every one is accepted.
    mime_types: tuple[str, ...]
    # "module:function" under mnemosyne.ingestion.parsers, imported on first use (the format
    # libraries are slow to load, and most processes never parse most formats).
    parser: str
    # upsert_item takes it as `text` (not only as `content_base64`).
    textual: bool = False
    # Source code: a directory walk takes it in only for a library of type "code".
    code: bool = False

    def parse(self, data: bytes, *, filename: str) -> ParsedDocument:
        module, function = self.parser.split(":")
        parse: Callable[..., ParsedDocument] = getattr(
            importlib.import_module(f"mnemosyne.ingestion.parsers.{module}"), function
        )
        return parse(data, filename=filename)


FORMATS: tuple[Format, ...] = (
    Format(
        "markdown", (".md", ".markdown"), ("text/markdown", "text/x-markdown"), "text:parse_markdown", True
    ),
    Format("text", (".txt",), ("text/plain",), "text:parse_plain", True),
    Format("html", (".html", ".htm"), ("text/html", "application/xhtml+xml"), "html:parse_html", True),
    Format("pdf", (".pdf",), ("application/pdf",), "pdf:parse_pdf"),
    Format(
        "docx",
        (".docx",),
        ("application/vnd.openxmlformats-officedocument.wordprocessingml.document",),
        "docx:parse_docx",
    ),
    Format(
        "pptx",
        (".pptx",),
        ("application/vnd.openxmlformats-officedocument.presentationml.presentation",),
        "pptx:parse_pptx",
    ),
    Format(
        "xlsx",
        (".xlsx",),
        ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",),
        "spreadsheets:parse_xlsx",
    ),
    Format(
        "csv", (".csv", ".tsv"), ("text/csv", "text/tab-separated-values"), "spreadsheets:parse_csv", True
    ),
    Format("epub", (".epub",), ("application/epub+zip",), "epub:parse_epub"),
    Format("rst", (".rst", ".rest"), ("text/x-rst", "text/prs.fallenstein.rst"), "markup:parse_rst", True),
    Format(
        "asciidoc",
        (".adoc", ".asciidoc"),
        ("text/asciidoc", "text/x-asciidoc"),
        "markup:parse_asciidoc",
        True,
    ),
    Format("code", (".py",), ("text/x-python", "text/x-script.python"), "code:parse_code", True, True),
    Format(
        "code",
        (".js", ".mjs", ".cjs", ".jsx"),
        ("text/javascript", "application/javascript"),
        "code:parse_code",
        True,
        True,
    ),
    Format(
        "code",
        (".ts", ".tsx"),
        ("application/typescript", "text/x-typescript"),
        "code:parse_code",
        True,
        True,
    ),
    Format("code", (".go",), ("text/x-go",), "code:parse_code", True, True),
    Format("code", (".rs",), ("text/x-rust",), "code:parse_code", True, True),
    Format("code", (".java",), ("text/x-java-source", "text/x-java"), "code:parse_code", True, True),
    Format("image", (".png",), ("image/png",), "image:parse_image"),
    Format("image", (".jpg", ".jpeg"), ("image/jpeg",), "image:parse_image"),
    Format("image", (".gif",), ("image/gif",), "image:parse_image"),
    Format("image", (".webp",), ("image/webp",), "image:parse_image"),
)

_BY_SUFFIX = {suffix: entry for entry in FORMATS for suffix in entry.suffixes}
_BY_MIME_TYPE = {mime: entry for entry in FORMATS for mime in entry.mime_types}

# Every suffix a directory walk takes in (source code only into a library of type "code").
SUFFIXES = frozenset(_BY_SUFFIX)
CODE_SUFFIXES = frozenset(suffix for entry in FORMATS if entry.code for suffix in entry.suffixes)
# The MIME types upsert_item documents, in table order.
UPLOAD_MIME_TYPES = tuple(entry.mime_types[0] for entry in FORMATS)
TEXT_MIME_TYPES = tuple(entry.mime_types[0] for entry in FORMATS if entry.textual)


def suffixes_for(library_type: str) -> set[str]:
    """The suffixes a directory walk into a library of this type takes in."""
    return set(SUFFIXES if library_type == "code" else SUFFIXES - CODE_SUFFIXES)


def by_suffix(suffix: str) -> Format | None:
    return _BY_SUFFIX.get(suffix.lower())


def by_filename(filename: str) -> Format | None:
    return by_suffix(PurePath(filename).suffix)


def by_item_type(item_type: str) -> Format | None:
    """The format items of this type were read as (Item.item_type)."""
    return next((entry for entry in FORMATS if entry.item_type == item_type), None)


def by_mime_type(mime_type: str) -> Format | None:
    """The format of a content type (parameters such as `; charset=` ignored, case too)."""
    return _BY_MIME_TYPE.get(mime_type.split(";")[0].strip().lower())
