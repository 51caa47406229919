"""Markdown tables in a document's text: found, kept whole with their caption, or split by rows.

Every format writes its tables as pipe tables (DOCX, HTML, PDF, spreadsheets), so the chunker
meets them in one form. A table that fits a chunk is one chunk with its caption; a longer one is
cut between rows, and every part after the first repeats the caption and header row, so each part
reads as a table on its own.

Pure: no Django, no database.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

_ROW = re.compile(r"\s*\|")
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_CAPTION = re.compile(r"(?:table|tab\.|exhibit|schedule)\s*[\w.:-]+", re.IGNORECASE)
# A unit line ("(In millions, except per share data)") says how to read the figures below it.
_UNIT = re.compile(
    r"\(?[^()\n]{0,40}\b(?:in|amounts in)\s+(?:[$€£¥]\s*)?(?:millions|thousands|billions)", re.IGNORECASE
)
# A caption longer than this (characters) is a paragraph, not a caption.
MAX_CAPTION_CHARS = 300
# A short line without a full stop right above a table is its title.
MAX_TITLE_WORDS = 15


@dataclass(frozen=True)
class TablePart:
    text: str
    char_start: int
    char_end: int
    token_count: int


def markdown_table(rows: Sequence[Sequence[str]]) -> str:
    """Rows of cell texts (the first is the header) as a pipe table; short rows are padded."""
    width = max(len(row) for row in rows)
    padded = [list(row) + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(padded[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(row) + " |" for row in padded[1:]]
    return "\n".join(lines)


def header_end(text: str, start: int, end: int) -> int | None:
    """Where a table's header (caption lines, header row, separator) ends, when text[start:end] is
    a pipe table (optionally under its caption); None otherwise."""
    lines = _lines(text, start, end)
    for index, (line_start, _) in enumerate(lines):
        if not _ROW.match(text, line_start):
            continue
        if index + 1 >= len(lines) or not _SEPARATOR.match(text[lines[index + 1][0] : lines[index + 1][1]]):
            return None
        if not all(_ROW.match(text, row_start) for row_start, _ in lines[index:]):
            return None
        return lines[index + 1][1]
    return None


def is_caption(text: str, start: int, end: int) -> bool:
    """Whether text[start:end], a paragraph right above a table, is its caption: "Table 3: …", a
    unit line, a line introducing it ("…as follows:"), or a short title without a full stop."""
    if end - start > MAX_CAPTION_CHARS:
        return False
    caption = text[start:end].strip()
    if _CAPTION.match(caption) or _UNIT.match(caption) or caption.endswith(":"):
        return True
    return len(caption.split()) <= MAX_TITLE_WORDS and not caption.endswith((".", "!", "?", "|"))


def split_rows(
    text: str, start: int, end: int, header: int, max_tokens: int, count: Callable[[int, int], int]
) -> list[TablePart]:
    """The table text[start:end] in parts of at most `max_tokens` (when its rows allow), cut
    between rows, each part after the first with the header text[start:header] repeated."""
    heading = text[start:header]
    header_tokens = count(start, header)
    rows = _lines(text, header + 1, end)
    parts: list[TablePart] = []
    first_row = 0
    while first_row < len(rows):
        last_row = first_row
        prefix = 0 if not parts else header_tokens
        part_start = start if not parts else rows[first_row][0]
        while last_row + 1 < len(rows) and prefix + count(part_start, rows[last_row + 1][1]) <= max_tokens:
            last_row += 1
        part_end = rows[last_row][1]
        body = text[part_start:part_end]
        parts.append(
            TablePart(
                text=body if not parts else f"{heading}\n{body}",
                char_start=part_start,
                char_end=part_end,
                token_count=prefix + count(part_start, part_end),
            )
        )
        first_row = last_row + 1
    return parts


def _lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    lines = []
    position = start
    while position < end:
        stop = text.find("\n", position, end)
        stop = end if stop == -1 else stop
        if text[position:stop].strip():
            lines.append((position, stop))
        position = stop + 1
    return lines
