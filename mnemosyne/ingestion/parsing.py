"""Turn an uploaded file into normalised text and a title, or say clearly why we cannot."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePath

from mnemosyne.ingestion.chunking import iter_markdown_headings, normalise_text

SUPPORTED_SUFFIXES = {".txt": "text", ".md": "markdown", ".markdown": "markdown"}

# Front matter must open with a `key:` line, so a leading thematic break (`---`) keeps its text.
_FRONT_MATTER = re.compile(r"---\n(?:([A-Za-z_][\w-]*:.*?)\n)??(?:---|\.\.\.)(?:\n|$)", re.DOTALL)
_FRONT_MATTER_TITLE = re.compile(r"^title:[ \t]*(.*?)[ \t]*$", re.MULTILINE)


class DocumentRejected(Exception):
    """Base for every reason a file cannot become a document; the message is for the user."""


class UnsupportedFile(DocumentRejected):
    pass


class UnreadableFile(DocumentRejected):
    pass


@dataclass(frozen=True)
class ParsedDocument:
    title: str
    item_type: str
    text: str
    markdown: bool


def parse_file(path: Path) -> ParsedDocument:
    _item_type(path.name)  # refuse before reading a possibly large file we cannot use
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UnreadableFile(f"cannot read file: {exc.strerror or exc}") from exc
    return parse_bytes(data, filename=path.name)


def parse_bytes(data: bytes, *, filename: str) -> ParsedDocument:
    item_type = _item_type(filename)
    if b"\x00" in data:
        raise UnreadableFile("binary content (contains NUL bytes); only UTF-8 text is supported")
    try:
        decoded = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(f"not valid UTF-8 (invalid byte at offset {exc.start})") from exc
    text = normalise_text(decoded)
    markdown = item_type == "markdown"
    title = _title_from_filename(filename)
    if markdown:
        text, front_matter_title = _strip_front_matter(text)
        title = _first_h1(text) or front_matter_title or title
    if not text:
        raise UnreadableFile("empty file")
    return ParsedDocument(title=title, item_type=item_type, text=text, markdown=markdown)


def _item_type(filename: str) -> str:
    suffix = PurePath(filename).suffix.lower()
    if not suffix:
        raise UnsupportedFile("unsupported file type (no file extension)")
    if suffix not in SUPPORTED_SUFFIXES:
        raise UnsupportedFile(f"unsupported file type '{suffix}'")
    return SUPPORTED_SUFFIXES[suffix]


def _title_from_filename(filename: str) -> str:
    name = PurePath(filename)
    return re.sub(r"[-_\s]+", " ", name.stem).strip() or name.name


def _strip_front_matter(text: str) -> tuple[str, str | None]:
    match = _FRONT_MATTER.match(text)
    if match is None:
        return text, None
    body = text[match.end() :].strip()
    title_line = _FRONT_MATTER_TITLE.search(match.group(1) or "")
    title = _unquote(title_line.group(1)) if title_line else ""
    return body, title or None


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1].strip()
    return value


def _first_h1(text: str) -> str | None:
    return next((h.title for h in iter_markdown_headings(text) if h.level == 1), None)
