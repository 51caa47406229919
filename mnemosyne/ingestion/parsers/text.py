"""Plain text and Markdown files in UTF-8 or a legacy encoding (text_encodings.py); Markdown is
titled by its first H1 or front matter."""

from __future__ import annotations

import re

from mnemosyne.ingestion.documents import ParsedDocument, UnreadableFile, title_from_filename
from mnemosyne.ingestion.markdown_lines import iter_markdown_headings
from mnemosyne.ingestion.text_encodings import decode_text
from mnemosyne.text.normalising import normalise_text

# Front matter must open with a `key:` line, so a leading thematic break (`---`) keeps its text.
_FRONT_MATTER = re.compile(r"---\n(?:([A-Za-z_][\w-]*:.*?)\n)??(?:---|\.\.\.)(?:\n|$)", re.DOTALL)
_FRONT_MATTER_TITLE = re.compile(r"^title:[ \t]*(.*?)[ \t]*$", re.MULTILINE)


def parse_markdown(data: bytes, *, filename: str) -> ParsedDocument:
    return parse_text(data, filename=filename, markdown=True)


def parse_plain(data: bytes, *, filename: str) -> ParsedDocument:
    return parse_text(data, filename=filename, markdown=False)


def parse_text(data: bytes, *, filename: str, markdown: bool) -> ParsedDocument:
    text = normalise_text(decode_text(data))
    title = title_from_filename(filename)
    if markdown:
        text, front_matter_title = _strip_front_matter(text)
        title = _first_h1(text) or front_matter_title or title
    if not text:
        raise UnreadableFile("empty file")
    item_type = "markdown" if markdown else "text"
    return ParsedDocument(title=title, item_type=item_type, text=text, markdown=markdown)


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
