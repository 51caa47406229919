"""Which lines are headings: from the PDF's outline when it has one, else from the page itself.

**Outline** (bookmarks): each entry is looked for on its destination page, its title compared with
the lines there letters and digits only, case aside (so "ASN.1 syntax" finds "2.1 ASN.1 syntax",
and a title with other punctuation or markup still finds its line). Of the lines that match, one set
as a heading (larger or bold) wins over a mention in body text, and the one nearest the outline's
target height wins among equals. An entry whose title is nowhere on its page marks the first line
at its target height, else the page's first line.

**The page itself**, for a PDF without an outline: a line is a heading when it is set larger than
the body text (HEADING_SIZE times), or bold at body size, stands alone, is short, and does not end
a sentence. Its level comes from its numbering ("2.4", "2.4.1", "Chapter 3") when it has one, else
from its size: the largest heading size is level 1, the next level 2, and so on, bold body-size
headings below them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from mnemosyne.ingestion.layout.blocks import HeadingMark, Style, is_item_start
from mnemosyne.ingestion.layout.lines import Line

HEADING_SIZE = 1.12
MAX_HEADING_CHARS = 160
MAX_HEADING_WORDS = 20

_NUMBERED = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){0,5})\.?\s+\S")
_CHAPTER = re.compile(r"^(?:chapter|part|appendix|annex)\s+[\w.]+", re.IGNORECASE)
# The items of a filing ("Item 7. Management's Discussion…", "ITEM 1A. RISK FACTORS") sit under
# its parts ("PART II").
_ITEM = re.compile(r"^item\s+\d{1,2}[a-z]?\b", re.IGNORECASE)
# A heading set on more pages than this share (and at least MIN_REPEATS) is a running title.
MAX_REPEATED_SHARE = 0.1
MIN_REPEATS = 4
_ENDS_SENTENCE = re.compile(r"[.,;]$")


@dataclass(frozen=True)
class OutlineEntry:
    level: int
    title: str
    page: int  # 1-based
    # The height on the page the entry points at (PDF points), when the outline says.
    y: float | None = None


def comparable(text: str) -> str:
    """Letters and digits only, lower case: how titles and lines are compared."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(char for char in text if char.isalnum())


def outline_headings(
    entries: Sequence[OutlineEntry], pages: Sequence[Sequence[Line]], style: Style
) -> dict[int, HeadingMark]:
    """The outline's entries found on their pages, by id(line)."""
    marks: dict[int, HeadingMark] = {}
    for entry in entries:
        if not 1 <= entry.page <= len(pages) or not pages[entry.page - 1]:
            continue
        lines = pages[entry.page - 1]
        found, printed = _find_title(entry, lines, style)
        for line in found:
            marks.setdefault(id(line), HeadingMark(entry.level, entry.title, printed))
    return marks


def _find_title(entry: OutlineEntry, lines: Sequence[Line], style: Style) -> tuple[list[Line], bool]:
    """The lines printing the entry's title (True), or the line its section starts at (False)."""
    title = comparable(entry.title)
    if not title:
        return [], True
    candidates: list[tuple[float, int]] = []
    for index, line in enumerate(lines):
        text = comparable(line.text)
        if not text:
            continue
        if title in text or (text in title and len(text) >= min(len(title), 8)):
            styled = line.size >= style.body_size * HEADING_SIZE or line.bold
            whole = len(text) <= len(title) + 12  # the line is the title (and perhaps its number)
            distance = abs(line.y1 - entry.y) if entry.y is not None else 0.0
            score = (4 if styled else 0) + (2 if whole else 0) - distance / 100
            candidates.append((score, index))
    if candidates:
        _, index = max(candidates, key=lambda pair: (pair[0], -pair[1]))
        found = [lines[index]]
        # A title wrapping onto the next line, set the same way.
        if index + 1 < len(lines) and comparable(lines[index].text) != title:
            following = lines[index + 1]
            if comparable(following.text) and comparable(following.text) in title:
                found.append(following)
        return found, True
    if entry.y is not None:
        below = [line for line in lines if line.y1 <= entry.y + 2]
        if below:
            return [max(below, key=lambda line: line.y1)], False
    return [lines[0]], False


def font_headings(pages: Sequence[Sequence[Line]], style: Style) -> dict[int, HeadingMark]:
    """Headings found from how lines are set, for a PDF without an outline, by id(line)."""
    candidates: list[tuple[Line, list[Line]]] = []
    for lines in pages:
        index = 0
        while index < len(lines):
            line = lines[index]
            if _looks_like_heading(line, style) and _stands_alone(lines, index, style):
                group = [line]
                # A heading wrapping over lines set the same way, close together.
                while (
                    index + 1 < len(lines)
                    and _same_setting(lines[index + 1], line)
                    and line.y0 - lines[index + 1].y0 <= 1.6 * max(line.size, style.spacing)
                    and len(" ".join(part.text for part in group)) < MAX_HEADING_CHARS
                    # "PART II" over "Item 5. Market for…": two headings, not one wrapped.
                    and not starts_structure(lines[index + 1].text)
                ):
                    index += 1
                    group.append(lines[index])
                candidates.append((line, group))
            index += 1
    candidates = _without_running_titles(candidates, len(pages))
    larger = {round(line.size * 2) / 2 for line, _ in candidates if not _body_sized(line, style)}
    sizes = sorted(larger, reverse=True)
    marks: dict[int, HeadingMark] = {}
    for line, group in candidates:
        title = " ".join(" ".join(part.text for part in group).split())
        level = _numbered_level(title)
        if level is None:
            size = round(line.size * 2) / 2
            level = sizes.index(size) + 1 if size in sizes else len(sizes) + 1
        for part in group:
            marks[id(part)] = HeadingMark(min(level, 6), title)
    return marks


def _without_running_titles(
    candidates: list[tuple[Line, list[Line]]], page_count: int
) -> list[tuple[Line, list[Line]]]:
    """Heading candidates whose title is set on many pages (a running title, a company name over
    every statement) are not headings."""
    pages: dict[str, set[int]] = {}
    for line, group in candidates:
        pages.setdefault(comparable(" ".join(part.text for part in group)), set()).add(line.page)
    limit = max(MIN_REPEATS, MAX_REPEATED_SHARE * page_count)
    return [
        (line, group)
        for line, group in candidates
        if len(pages[comparable(" ".join(part.text for part in group))]) < limit
    ]


def starts_structure(text: str) -> bool:
    """A line that opens a part, chapter or item of the document ("PART II", "Item 7.")."""
    text = text.strip()
    return bool(_CHAPTER.match(text) or _ITEM.match(text))


def _numbered_level(title: str) -> int | None:
    if _CHAPTER.match(title):
        return 1
    if _ITEM.match(title):
        return 2
    numbered = _NUMBERED.match(title)
    if numbered is None:
        return None
    return numbered.group(1).count(".") + 1


def _body_sized(line: Line, style: Style) -> bool:
    return line.size < style.body_size * HEADING_SIZE


def _looks_like_heading(line: Line, style: Style) -> bool:
    text = line.text.strip()
    if line.mono or not text or len(text) > MAX_HEADING_CHARS or len(text.split()) > MAX_HEADING_WORDS:
        return False
    if not any(char.isalpha() for char in text) or _ENDS_SENTENCE.search(text) or is_item_start(text):
        return False
    if not _body_sized(line, style):
        return True
    return line.bold and line.size >= style.body_size * 0.95


def _stands_alone(lines: Sequence[Line], index: int, style: Style) -> bool:
    """Not a line of a paragraph set the same way: space above it, or the next line set otherwise."""
    line = lines[index]
    if index + 1 < len(lines) and not _same_setting(lines[index + 1], line):
        return True
    above = lines[index - 1] if index > 0 else None
    return above is None or above.y0 - line.y0 > 1.3 * style.spacing


def _same_setting(line: Line, other: Line) -> bool:
    return abs(line.size - other.size) < 0.6 and line.bold == other.bold and line.mono == other.mono
