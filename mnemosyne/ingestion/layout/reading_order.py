"""Reading order on a page: top to bottom, and down one column before the next.

A page is taken as set in two columns when a vertical gutter runs down its middle: a strip that no
line crosses, with enough lines wholly on each side. Then the lines above the columns (a title, an
abstract set across the page) come first, the left column, the right column, and whatever spans
the page below them. Otherwise the lines keep the order of the text layer, which for single-column
documents is the order they are read in.
"""

from __future__ import annotations

from collections.abc import Sequence

from mnemosyne.ingestion.layout.lines import Line

# A gutter must keep at least this share of the page's lines wholly on each side of it.
MIN_COLUMN_SHARE = 0.25
# The gutter is looked for in the middle part of the text's width.
GUTTER_SEARCH = (0.3, 0.7)
# A gutter is at least this wide, in points.
MIN_GUTTER = 6.0
# A line wider than this share of the text's width spans the columns.
MAX_COLUMN_WIDTH = 0.6


def reading_order(lines: Sequence[Line]) -> list[Line]:
    """The page's lines in reading order (two columns: the left one first)."""
    gutter = find_gutter(lines)
    if gutter is None:
        return list(lines)
    left = [line for line in lines if line.x1 <= gutter]
    right = [line for line in lines if line.x0 >= gutter]
    spanning = [line for line in lines if line.x0 < gutter < line.x1]
    columns_top = max((line.y1 for line in left + right), default=0.0)
    above = [line for line in spanning if line.y0 >= columns_top - 1]
    below = [line for line in spanning if line.y0 < columns_top - 1]

    def down(group: list[Line]) -> list[Line]:
        return sorted(group, key=lambda line: (-line.y1, line.x0))

    return down(above) + down(left) + down(right) + down(below)


def find_gutter(lines: Sequence[Line]) -> float | None:
    """The x of a gutter between two columns, or None for a single column."""
    if len(lines) < 8:
        return None
    low = min(line.x0 for line in lines)
    high = max(line.x1 for line in lines)
    width = high - low
    if width <= 0:
        return None
    start, stop = low + GUTTER_SEARCH[0] * width, low + GUTTER_SEARCH[1] * width
    # Lines set across the whole page (a title, an abstract) do not tell where the columns are.
    narrow = [line for line in lines if line.width <= MAX_COLUMN_WIDTH * width]
    if len(narrow) < 8:
        return None
    # Sweep candidate positions; keep the widest run of positions no line crosses.
    step = 2.0
    best: tuple[float, float] | None = None
    run_start: float | None = None
    x = start
    while x <= stop:
        crossed = any(line.x0 < x < line.x1 for line in narrow)
        if not crossed and run_start is None:
            run_start = x
        if (crossed or x + step > stop) and run_start is not None:
            run_end = x
            if best is None or run_end - run_start > best[1] - best[0]:
                best = (run_start, run_end)
            run_start = None
        x += step
    if best is None or best[1] - best[0] < MIN_GUTTER:
        return None
    middle = (best[0] + best[1]) / 2
    left = sum(1 for line in narrow if line.x1 <= middle)
    right = sum(1 for line in narrow if line.x0 >= middle)
    if min(left, right) < MIN_COLUMN_SHARE * len(narrow):
        return None
    return middle
