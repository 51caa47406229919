"""The pages a question points at ("on page 14", "the second page", "the cover page", "slide 3"):
their chunks are preferred (search/units.py). Pure.
"""

from __future__ import annotations

import re

_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_ORDINAL_WORDS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
}
_PAGE_NUMBER = re.compile(
    r"\b(?:page|p\.|pg\.?|slide)\s*\(?(\d{1,4}|one|two|three|four|five|six|seven|eight|nine|ten)\b",
    re.IGNORECASE,
)
_PAGE_RANGE = re.compile(
    r"\b(?:pages|pp\.|slides)\s*(\d{1,4})\s*(?:-|–|to|and|through)\s*(\d{1,4})\b", re.IGNORECASE
)
_PAGE_ORDINAL = re.compile(
    r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth)\s+(?:page|slide)\b", re.IGNORECASE
)
_COVER = re.compile(r"\b(?:cover|front|title)\s+page\b", re.IGNORECASE)
# A range longer than this is not a pointer to pages.
MAX_PAGES_NAMED = 20


def pages_named(question: str) -> set[int]:
    """The page numbers a question points at."""
    pages: set[int] = set()
    for match in _PAGE_RANGE.finditer(question):
        first, last = int(match.group(1)), int(match.group(2))
        if 0 < first <= last and last - first < MAX_PAGES_NAMED:
            pages.update(range(first, last + 1))
    for match in _PAGE_NUMBER.finditer(question):
        value = match.group(1).lower()
        pages.add(int(value) if value.isdigit() else _NUMBER_WORDS[value])
    for match in _PAGE_ORDINAL.finditer(question):
        pages.add(_ORDINAL_WORDS[match.group(1).lower()])
    if _COVER.search(question):
        pages.add(1)
    return {page for page in pages if page > 0}
