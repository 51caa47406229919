"""A page's lines as rows of cells: what aligned_tables.py finds tables in. Pure.

Lines at the same height side by side are one row; a line's text is cut into cells at wide gaps
between its characters (CELL_GAP line heights), a lone "$" joining the number after it and a lone
"%" or ")" the number before it. A row's numbers are the cells at its end that read as numbers in
the forms statements print them ("5,794", "$(454)", "12.5%", "—" for none).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mnemosyne.ingestion.layout.lines import Line

# A gap between characters of at least this many line heights separates two cells.
CELL_GAP = 0.8
# Lines whose vertical centres are closer than this share of their height are one row.
SAME_ROW = 0.45
_NUMBER = re.compile(
    r"""^(?:[$€£¥]\s*)?[(\[]?\s*[-–−+]?\s*(?:[$€£¥]\s*)?
        (?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s*[)\]]?\s*%?\)?\*?$""",
    re.VERBOSE,
)
_NIL = re.compile(r"^(?:[—–-]+|n/?a|nm|n/m|\*+)$", re.IGNORECASE)
_YEAR = re.compile(r"^(?:19|20)\d{2}$")
_CURRENCY = re.compile(r"^[$€£¥]$")
# A dot leader between a label and its figures: four or more dots, spaced or not.
_LEADER = re.compile(r"\s*(?:\.\s?){4,}\s*")


@dataclass(frozen=True)
class Cell:
    text: str
    x0: float
    x1: float


@dataclass
class Row:
    lines: list[Line]
    cells: list[Cell]

    @property
    def top(self) -> float:
        return max(line.y1 for line in self.lines)

    @property
    def bottom(self) -> float:
        return min(line.y0 for line in self.lines)

    @property
    def centre(self) -> float:
        return (self.top + self.bottom) / 2

    @property
    def x0(self) -> float:
        return min(cell.x0 for cell in self.cells)

    @property
    def x1(self) -> float:
        return max(cell.x1 for cell in self.cells)

    @property
    def text(self) -> str:
        return " ".join(cell.text for cell in self.cells)

    def numbers(self) -> list[Cell]:
        """The cells at its end that are numbers (or a dash standing for none)."""
        tail: list[Cell] = []
        for cell in reversed(self.cells):
            if not is_number(cell.text):
                break
            tail.append(cell)
        return tail[::-1]

    def label(self) -> str:
        return " ".join(cell.text for cell in self.cells[: len(self.cells) - len(self.numbers())])


def is_number(text: str) -> bool:
    text = text.strip()
    return bool(_NUMBER.match(text) or _NIL.match(text))


def cells_of(line: Line) -> list[Cell]:
    """The line's text cut at wide gaps between characters, and at dot leaders ("Net income ......
    $ 629,551": the dots run up to the number, leaving no gap to see)."""
    text = line.text
    gap = CELL_GAP * max(line.height, 1.0)
    leaders = {match.start(): match.end() for match in _LEADER.finditer(text)}
    cells: list[Cell] = []
    start = 0
    index = 0

    def close(end: int, resume: int) -> None:
        nonlocal start
        if text[start:end].strip():
            cells.append(Cell(text[start:end].strip(), line.edge(start), line.edge(end)))
        start = resume

    while index < len(text):
        if index in leaders:
            close(index, leaders[index])
            index = leaders[index]
            continue
        if text[index] == " ":
            end = index
            while index < len(text) and text[index] == " ":
                index += 1
            if line.edge(index) - line.edge(end) >= gap:
                close(end, index)
            continue
        index += 1
    close(len(text), len(text))
    return _joined_symbols(cells)


def _joined_symbols(cells: list[Cell]) -> list[Cell]:
    """A lone currency sign joins the number after it, a lone "%" or ")" the one before it."""
    joined: list[Cell] = []
    pending: Cell | None = None
    for cell in cells:
        if pending is not None:
            cell = Cell(f"{pending.text}{cell.text}", pending.x0, cell.x1)
            pending = None
        if _CURRENCY.match(cell.text):
            pending = cell
            continue
        if cell.text in ("%", ")") and joined:
            last = joined.pop()
            cell = Cell(f"{last.text}{cell.text}", last.x0, cell.x1)
        joined.append(cell)
    if pending is not None:
        joined.append(pending)
    return joined


def rows_of(lines: Sequence[Line]) -> list[Row]:
    """The page's lines as rows, top to bottom: lines at one height side by side are one row."""
    rows: list[Row] = []
    for line in sorted(lines, key=lambda line: (-line.y1, line.x0)):
        middle = (line.y0 + line.y1) / 2
        row = next(
            (
                row
                for row in reversed(rows[-3:])
                if abs(row.centre - middle) <= SAME_ROW * max(line.height, 1.0)
                and all(other.x1 <= line.x0 or line.x1 <= other.x0 for other in row.lines)
            ),
            None,
        )
        cells = cells_of(line)
        if not cells:
            continue
        if row is None:
            rows.append(Row([line], cells))
        else:
            row.lines.append(line)
            row.cells = sorted([*row.cells, *cells], key=lambda cell: cell.x0)
    return rows


def is_years(cells: Sequence[Cell]) -> bool:
    return bool(cells) and all(_YEAR.match(cell.text) for cell in cells)
