"""Page furniture: running headers and footers, and page numbers, which are not the document's text.

Only a line set apart from the page's text is ever furniture: near the top or bottom edge, with a
gap of at least ISOLATION times the usual line spacing between it and the text towards the page's
middle (so a document without running headers keeps its first and last lines). Of those:

- a **band**: on many pages (MIN_PAGE_SHARE of them, and at least MIN_PAGES), the set-apart line
  nearest the top (or bottom) sits at the same height; lines at that height are a running header
  (or footer), whatever they say: "Chapter 2: ASN.1 structure handling 3";
- a **repeated line**: the same text (digits aside) set apart on many pages;
- a **page number**: a set-apart line that is only a number, a roman numeral, "Page 3",
  "3 of 10", "- 3 -" or a lettered page of an appendix's numbering, "F-5".

Wherever they are, the entries of a table of contents or an index ("2.1 ASN.1 syntax . . . . 2",
a dot leader and a page number) go too: they repeat the headings the sections already carry and
crowd search results with lists of page numbers; and so do lines of one letter or digit.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from mnemosyne.ingestion.layout.lines import Line

# Near the edge: within this share of the page's height from its top or bottom.
EDGE_SHARE = 0.12
MIN_PAGE_SHARE = 0.3
MIN_PAGES = 3
# Heights within this many points are the same height.
Y_TOLERANCE = 3.0
# Set apart: a gap of at least this many line spacings to the nearest text towards the middle.
ISOLATION = 1.8

_PAGE_NUMBER = re.compile(
    r"^[\s\-–—|]*(?:page\s+)?(?:[A-Z]-)?(?:\d{1,4}|[ivxlcdm]{1,7})(?:\s*(?:of|/)\s*\d{1,4})?[\s\-–—|]*$",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")
# A dot leader (". . . ." or "....") running to a page number (or roman numeral) at the line's end.
_LEADER = re.compile(r"(?:\.\s?){4,}\s*(?:\d{1,4}|[ivxlcdm]{1,7})\s*$", re.IGNORECASE)


def is_leader_entry(text: str) -> bool:
    return bool(_LEADER.search(text))


def is_stray(line: Line) -> bool:
    """A lone letter or digit (an index's letter heading, a formula's scrap): no text to search."""
    text = line.text.strip()
    return len(text) == 1 and text.isalnum() and not line.mono


def is_page_number(text: str) -> bool:
    return bool(text.strip()) and bool(_PAGE_NUMBER.match(text.strip()))


def remove_furniture(
    pages: Sequence[Sequence[Line]], heights: Sequence[float], *, spacing: float
) -> list[list[Line]]:
    """Each page's lines without running headers, footers and page numbers.

    `spacing` is the document's usual distance between consecutive lines, in points.
    """
    threshold = max(MIN_PAGES, MIN_PAGE_SHARE * len(pages))
    apart = [set_apart(lines, height, spacing) for lines, height in zip(pages, heights, strict=True)]
    top_band = _band([max(line.y1 for line in lines) for lines in apart if lines], threshold)
    bottom_band = _band([min(line.y0 for line in lines) for lines in apart if lines], threshold)
    repeated = _repeated_texts(apart, threshold)
    kept: list[list[Line]] = []
    for lines, candidates in zip(pages, apart, strict=True):
        furniture = {id(line) for line in candidates if _furniture(line, top_band, bottom_band, repeated)}
        kept.append(
            [
                line
                for line in lines
                if id(line) not in furniture and not is_leader_entry(line.text) and not is_stray(line)
            ]
        )
    return kept


def set_apart(lines: Sequence[Line], height: float, spacing: float) -> list[Line]:
    """The page's top row and bottom row of lines, each when it is near its edge and set apart from
    the rest of the page's text by a clear gap (a page with nothing else keeps its text)."""
    if len(lines) < 2:
        return []
    found: list[Line] = []
    top = max(line.y1 for line in lines)
    row = [line for line in lines if line.y1 >= top - Y_TOLERANCE]
    rest = [line.y1 for line in lines if line.y1 < top - Y_TOLERANCE]
    gap = min(line.y0 for line in row) - max(rest, default=0.0)
    if top >= height * (1 - EDGE_SHARE) and rest and _apart(gap, row, spacing):
        found += row
    bottom = min(line.y0 for line in lines)
    row = [line for line in lines if line.y0 <= bottom + Y_TOLERANCE]
    rest = [line.y0 for line in lines if line.y0 > bottom + Y_TOLERANCE]
    gap = min(rest, default=0.0) - max(line.y1 for line in row)
    if bottom <= height * EDGE_SHARE and rest and _apart(gap, row, spacing):
        found += [line for line in row if line not in found]
    return found


def _apart(gap: float, row: Sequence[Line], spacing: float) -> bool:
    # Spacing is baseline to baseline; the gap is between the boxes, a line's height less.
    return gap >= ISOLATION * spacing - max(line.height for line in row)


def _furniture(line: Line, top_band: float | None, bottom_band: float | None, repeated: set[str]) -> bool:
    if top_band is not None and abs(line.y1 - top_band) <= Y_TOLERANCE:
        return True
    if bottom_band is not None and abs(line.y0 - bottom_band) <= Y_TOLERANCE:
        return True
    return is_page_number(line.text) or _key(line.text) in repeated


def _band(edges: list[float], threshold: float) -> float | None:
    """The height most pages' edge line sits at, when enough of them share it."""
    if not edges:
        return None
    counts = Counter(round(edge / Y_TOLERANCE) for edge in edges)
    bucket, seen = counts.most_common(1)[0]
    # Neighbouring buckets hold the same height rounded the other way.
    seen += counts.get(bucket - 1, 0) + counts.get(bucket + 1, 0)
    return bucket * Y_TOLERANCE if seen >= threshold else None


def _repeated_texts(apart: Sequence[Sequence[Line]], threshold: float) -> set[str]:
    counts: Counter[str] = Counter()
    for lines in apart:
        counts.update({key for key in (_key(line.text) for line in lines) if key})
    return {key for key, seen in counts.items() if seen >= threshold}


def _key(text: str) -> str:
    return " ".join(_DIGITS.sub("#", text.lower()).split())
