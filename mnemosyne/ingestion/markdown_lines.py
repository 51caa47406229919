"""Markdown read line by line, as the chunker needs it: which lines are blank (paragraph breaks)
and which are headings — ATX (`## Title`) and setext (`Title` underlined with `===` or `---`) —
outside fenced code blocks. Offsets are into the text as given."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

_HEADING = re.compile(r" {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")
# A setext underline: `=` for level 1, `-` for level 2, indented at most 3 spaces.
_SETEXT_UNDERLINE = re.compile(r" {0,3}(=+|-+)[ \t]*")
# Lines that open a block of their own (list item, quote, table row, indented code): not a title.
_BLOCK_START = re.compile(r" {4,}|\s*(?:[-*+>|]|\d{1,9}[.)])(?:\s|$)")


@dataclass(frozen=True)
class MarkdownHeading:
    level: int
    title: str
    line_start: int
    line_end: int


class Line(NamedTuple):
    start: int
    end: int
    blank: bool
    heading: MarkdownHeading | None


def iter_markdown_headings(text: str) -> Iterator[MarkdownHeading]:
    """ATX and setext headings outside fenced code blocks, in document order."""
    for line in scan_lines(text, markdown=True):
        if line.heading is not None:
            yield line.heading


def scan_lines(text: str, *, markdown: bool) -> Iterator[Line]:
    """Every line once; a setext heading (its title line and underline) comes as one line."""
    lines = text.split("\n")
    fence: str | None = None  # the opening marker while inside a fenced code block
    start = 0
    previous_blank = True
    index = 0
    while index < len(lines):
        line = lines[index]
        end = start + len(line)
        blank = not line.strip()
        heading = None
        if markdown and not blank:
            lead = line.lstrip(" ")[:1]
            if fence is not None:
                if lead == fence[0] and _closes_fence(line, fence):
                    fence = None
                # Blank lines inside a fence do not end its paragraph.
                yield Line(start, end, False, None)
                start, index, previous_blank = end + 1, index + 1, False
                continue
            if lead in ("`", "~") and (opening := _FENCE_OPEN.match(line)):
                fence = opening.group(1)
            elif lead == "#" and (match := _HEADING.fullmatch(line)) and match.group(2):
                heading = MarkdownHeading(len(match.group(1)), match.group(2).strip(), start, end)
            elif previous_blank and index + 1 < len(lines) and not _BLOCK_START.match(line):
                underline = _SETEXT_UNDERLINE.fullmatch(lines[index + 1])
                if underline is not None:
                    # A one-line paragraph underlined: a heading over both lines.
                    end = end + 1 + len(lines[index + 1])
                    level = 1 if underline.group(1)[0] == "=" else 2
                    yield Line(start, end, False, MarkdownHeading(level, line.strip(), start, end))
                    start, index, previous_blank = end + 1, index + 2, False
                    continue
        yield Line(start, end, blank and fence is None, heading)
        start, index, previous_blank = end + 1, index + 1, blank and fence is None


def starts_fence(text: str, position: int) -> bool:
    """Whether a fenced code block opens at `position` of `text`."""
    return _FENCE_OPEN.match(text, position) is not None


def _closes_fence(line: str, fence: str) -> bool:
    stripped = line.strip()
    indent = len(line) - len(line.lstrip(" "))
    return indent <= 3 and len(stripped) >= len(fence) and stripped == fence[0] * len(stripped)
