"""Tables without ruling lines: rows of a label and numbers whose numbers stand in shared columns.

Financial statements and most tables in reports are set without rules. On a page they are rows
of text whose cells are set apart by wide gaps (CELL_GAP line heights), each row a label followed
by numbers ("Cash and cash equivalents $ 5,794 $ 4,225"), the numbers of every row right-aligned
in the same columns. Such a run of rows is read as a table:

- **rows**: lines at the same height are one row; its cells are split at wide gaps, a lone "$" joins
  the number after it and a lone "%" the number before it;
- **body**: at least MIN_ROWS rows ending in numbers whose right edges fall in the same columns
  (two columns, or one column over more rows), with label-only rows between them ("Current
  assets:") as long as they stay left of the numbers; a label broken over two lines is joined;
- **header**: the rows just above the body set over its columns ("Three Months Ended", "July 1,",
  "2023"), each column's header the words above it read top to bottom, a cell spanning several
  columns heading each of them;
- **title**: the lines above the header that name it — the statement's title, the company line,
  the unit line "(In millions, except per share data)", or a "Table 3:" caption — bold, capitals,
  centred or in parentheses, close together.

The table becomes a Markdown table under its title and unit line, so every part of a long table
keeps them (tables.split_rows repeats a table's caption and header), and its title starts a section
of the document. Pure: lines in, tables out.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from mnemosyne.ingestion.layout.aligned_rows import Cell, Row, is_number, is_years, rows_of
from mnemosyne.ingestion.layout.lines import Line

# Rows further apart than this many typical row spacings end the table.
MAX_ROW_GAP = 2.6
# A table has at least this many rows ending in numbers (one column of numbers: MIN_ROWS + 1).
MIN_ROWS = 2
# Right edges within this many points are one column (a hanging parenthesis moves one a little).
COLUMN_TOLERANCE = 9.0
# Header and title rows looked for above a table.
MAX_HEADER_ROWS = 5
MAX_TITLE_ROWS = 4
MAX_TITLE_CHARS = 200

UNIT_LINE = re.compile(
    r"^\(?.{0,40}\b(?:in|amounts in)\s+(?:[$€£¥]\s*)?(?:millions|thousands|billions|percent)"
    r"|^\((?:unaudited|audited)\)$",
    re.IGNORECASE,
)
_CAPTION = re.compile(r"^(?:table|exhibit|schedule)\s+[\w.-]+", re.IGNORECASE)
# A part or item of the document ("PART II", "Item 8. Financial Statements") heads more than a table.
_STRUCTURE = re.compile(r"^(?:part\s+[ivx\d]+\b|item\s+\d{1,2}[a-z]?\b|chapter\s+\w+)", re.IGNORECASE)


@dataclass
class AlignedTable:
    """A table found on a page: its title (lines naming it), unit line, header and body rows."""

    title: list[str]
    unit: str
    header: list[str]  # one per column, the label column first
    rows: list[list[str]]
    # The lines of each part: title, header, then each body row (for the highlight boxes).
    title_lines: list[Line] = field(default_factory=list)
    header_lines: list[Line] = field(default_factory=list)
    row_lines: list[list[Line]] = field(default_factory=list)

    @property
    def lines(self) -> list[Line]:
        return [*self.title_lines, *self.header_lines, *(line for row in self.row_lines for line in row)]

    @property
    def heading(self) -> str:
        """The title as a section heading: the title lines without the unit line."""
        return " ".join(" ".join(self.title).split())

    @property
    def caption(self) -> str:
        return " ".join(part for part in (self.heading, self.unit, self.shared_header) if part)

    @property
    def shared_header(self) -> str:
        """The words every column's header opens with ("For the Years Ended December 31,"), said
        once in the caption rather than in every column."""
        columns = [header.split() for header in self.header[1:]]
        if len(columns) < 2 or not all(columns):
            return ""
        shared = 0
        while all(len(words) > shared + 1 and words[shared] == columns[0][shared] for words in columns):
            shared += 1
        return " ".join(columns[0][:shared]) if shared >= 2 else ""

    def header_row(self) -> list[str]:
        """The header, less the words every column shares (said in the caption)."""
        shared = self.shared_header
        if not shared:
            return self.header
        return [self.header[0], *(header[len(shared) :].strip() for header in self.header[1:])]


def find_tables(lines: Sequence[Line], page_width: float) -> list[AlignedTable]:
    """The tables without rules among one page's lines."""
    rows = rows_of(lines)
    if len(rows) < MIN_ROWS:
        return []
    spacing = _row_spacing(rows)
    tables: list[AlignedTable] = []
    taken: set[int] = set()
    index = 0
    while index < len(rows):
        body = _body(rows, index, spacing)
        if body is None:
            index += 1
            continue
        first, last, columns = body
        table = _table(rows, first, last, columns, spacing, page_width, taken)
        if table is not None:
            tables.append(table)
        index = last + 1
    return tables


def _row_spacing(rows: Sequence[Row]) -> float:
    gaps = [above.centre - below.centre for above, below in itertools.pairwise(rows)]
    usual = [gap for gap in gaps if gap > 0]
    heights = [max(row.top - row.bottom, 1.0) for row in rows]
    return statistics.median(usual) if usual else 1.4 * statistics.median(heights)


def _body(rows: Sequence[Row], start: int, spacing: float) -> tuple[int, int, list[float]] | None:
    """The table body starting at rows[start] (a row ending in numbers): (first, last, columns)."""
    if not _is_number_row(rows[start]):
        return None
    members = [start]
    numeric = [start]
    index = start + 1
    while index < len(rows):
        row = rows[index]
        if rows[members[-1]].centre - row.centre > MAX_ROW_GAP * spacing:
            break
        if _is_number_row(row):
            members.append(index)
            numeric.append(index)
        elif _is_label_row(row, rows, numeric):
            members.append(index)
        else:
            break
        index += 1
    # Label rows after the last number row belong to what follows, not to the table.
    last = numeric[-1]
    columns = _columns([rows[i] for i in numeric])
    enough = len(numeric) >= MIN_ROWS + (1 if len(columns) < 2 else 0)
    if not columns or not enough:
        return None
    return start, last, columns


def _is_number_row(row: Row) -> bool:
    numbers = row.numbers()
    if not numbers or is_years(numbers):  # a row of years heads the columns
        return False
    if len(numbers) == len(row.cells):
        # Only numbers: a lone number is a page number or a footnote's.
        return len(numbers) >= 2
    label_end = row.cells[len(row.cells) - len(numbers) - 1].x1
    return numbers[0].x0 > label_end


def _is_label_row(row: Row, rows: Sequence[Row], numeric: list[int]) -> bool:
    """A row of the table without numbers ("Current assets:"): it stays left of the numbers."""
    if len(row.cells) > 2 or len(row.text) > 120:
        return False
    first_number = min(cell.x0 for i in numeric for cell in rows[i].numbers())
    return row.x1 < first_number - 2


def _columns(rows: Sequence[Row]) -> list[float]:
    """The right edges of the table's columns of numbers, left to right."""
    edges = sorted(cell.x1 for row in rows for cell in row.numbers())
    clusters: list[list[float]] = []
    for edge in edges:
        if clusters and edge - clusters[-1][-1] <= COLUMN_TOLERANCE:
            clusters[-1].append(edge)
        else:
            clusters.append([edge])
    support = max(2, round(0.3 * len(rows)))
    return [statistics.median(cluster) for cluster in clusters if len(cluster) >= support]


def _column_of(cell: Cell, columns: Sequence[float]) -> int:
    return min(range(len(columns)), key=lambda i: abs(columns[i] - cell.x1))


def _table(
    rows: Sequence[Row],
    first: int,
    last: int,
    columns: list[float],
    spacing: float,
    page_width: float,
    taken: set[int],
) -> AlignedTable | None:
    left_of_numbers = min(cell.x0 for row in rows[first : last + 1] for cell in row.numbers())
    # Label rows just above the first row of numbers open the body ("Assets", "Current assets:").
    while (
        first > 0
        and first - 1 not in taken
        and rows[first - 1].centre - rows[first].centre <= MAX_ROW_GAP * spacing
        and _opens_body(rows[first - 1], left_of_numbers, page_width)
    ):
        first -= 1
    body_rows = rows[first : last + 1]
    if _prose(body_rows):
        return None
    spans = _column_spans(body_rows, columns)
    header_rows: list[Row] = []
    title_rows: list[Row] = []
    unit_rows: list[Row] = []
    top = first
    # Up from the body: header rows over the columns (with a unit line among them, as some set
    # it), then the title; anything else ends the table.
    while top > 0 and top - 1 not in taken and first - top < MAX_HEADER_ROWS + MAX_TITLE_ROWS:
        row, below = rows[top - 1], rows[top]
        if row.centre - below.centre > MAX_ROW_GAP * spacing:
            break
        if UNIT_LINE.match(row.text) and len(row.cells) > 1 and UNIT_LINE.match(row.cells[0].text):
            # "(In Millions)" at the left of a header row: the unit, and the row's header cells.
            unit_rows.insert(0, Row(row.lines, row.cells[:1]))
            header_rows.insert(0, Row(row.lines, row.cells[1:]))
        elif UNIT_LINE.match(row.text):
            unit_rows.insert(0, row)
        elif (
            not title_rows
            and len(header_rows) < MAX_HEADER_ROWS
            and _is_header_row(row, left_of_numbers, page_width)
        ):
            header_rows.insert(0, row)
        elif len(title_rows) < MAX_TITLE_ROWS and _is_title_row(row, page_width):
            title_rows.insert(0, row)
        else:
            break
        top -= 1
    title_start = top
    taken.update(range(title_start, last + 1))
    header = _header(header_rows, spans)
    body: list[list[str]] = []
    body_lines: list[list[Line]] = []
    for row in body_rows:
        numbers = row.numbers()
        label = row.label()
        if body and numbers and label[:1].islower() and not any(body[-1][1:]):
            # The label broken over two lines: its first part stood alone on the line above.
            body[-1][0] = f"{body[-1][0]} {label}"
            cells = body[-1]
            body_lines[-1] = [*body_lines[-1], *row.lines]
        else:
            cells = [label] + [""] * len(columns)
            body.append(cells)
            body_lines.append(list(row.lines))
        for cell in numbers:
            column = _column_of(cell, columns)
            cells[column + 1] = f"{cells[column + 1]} {cell.text}".strip()
    return AlignedTable(
        title=[row.text for row in title_rows if len(row.text) <= MAX_TITLE_CHARS],
        unit=" ".join(row.text for row in unit_rows),
        header=header,
        rows=body,
        title_lines=[line for row in [*title_rows, *unit_rows] for line in row.lines],
        header_lines=[line for row in header_rows for line in row.lines],
        row_lines=body_lines,
    )


def _prose(rows: Sequence[Row]) -> bool:
    """Lines of running text beside numbers (a chart's scale beside a column of text), not a table:
    most labels long, or most starting in lower case."""
    labels = [row.label() for row in rows if row.label()]
    if not labels:
        return False
    long = sum(len(label) > 60 for label in labels)
    lower = sum(label[:1].islower() for label in labels)
    return long > 0.5 * len(labels) or lower > 0.4 * len(labels)


def _column_spans(rows: Sequence[Row], columns: Sequence[float]) -> list[tuple[float, float]]:
    """Each column's horizontal extent: from its numbers' leftmost start to its right edge."""
    lefts: list[list[float]] = [[] for _ in columns]
    for row in rows:
        for cell in row.numbers():
            lefts[_column_of(cell, columns)].append(cell.x0)
    return [(min(found, default=right - 30), right) for found, right in zip(lefts, columns, strict=True)]


def _opens_body(row: Row, left_of_numbers: float, page_width: float) -> bool:
    """A label row above the body: left of the numbers, not a title, not a unit line."""
    text = row.text
    if UNIT_LINE.match(text) or _CAPTION.match(text) or _is_centred_title(row, page_width):
        return False
    return len(row.cells) == 1 and row.x1 < left_of_numbers - 2 and len(text) <= 80


def _is_header_row(row: Row, left_of_numbers: float, page_width: float) -> bool:
    """A row over the columns (not starting in the labels' area), or a row of years."""
    if _is_centred_title(row, page_width) and not is_years(row.numbers()):
        return False
    if is_years(row.numbers()):
        return True
    # Over the columns: it starts near them, or every cell of it reaches into them (a "Three Months
    # Ended" wider than the numbers under it).
    over = row.x0 >= left_of_numbers - 40 or all(cell.x1 >= left_of_numbers - 2 for cell in row.cells)
    return over and len(row.text) <= 160


def _is_title_row(row: Row, page_width: float) -> bool:
    text = row.text.strip()
    if not text or len(text) > MAX_TITLE_CHARS or is_number(text) or _STRUCTURE.match(text):
        return False
    if UNIT_LINE.match(text) or _CAPTION.match(text):
        return True
    bold = all(line.bold for line in row.lines)
    letters = sum(char.isalpha() for char in text)
    capitals = letters >= 3 and sum(char.isupper() for char in text) >= 0.7 * letters
    return (bold or capitals) and (_is_centred_title(row, page_width) or len(text) <= 90)


def _is_centred_title(row: Row, page_width: float) -> bool:
    middle = (row.x0 + row.x1) / 2
    return len(row.cells) == 1 and abs(middle - page_width / 2) <= 0.08 * page_width


def _header(rows: Sequence[Row], spans: Sequence[tuple[float, float]]) -> list[str]:
    """One header per column (the label column first): the words over each column, top down.

    A row with a cell for every column gives each column the cells over it; a row with fewer
    (a "Three Months Ended" over two columns, a "Year ended December 31," centred over three)
    gives each column the cell nearest to it.
    """
    parts: list[list[str]] = [[] for _ in range(len(spans) + 1)]
    left = spans[0][0]
    for row in rows:
        over = [cell for cell in row.cells if cell.x1 >= left - 40]
        for cell in row.cells:
            if cell not in over:
                parts[0].append(cell.text)
        if not over:
            continue
        if len(over) >= len(spans):
            for cell in over:
                for index, (start, end) in enumerate(spans):
                    if cell.x0 <= end + 2 and cell.x1 >= start - 2:
                        parts[index + 1].append(cell.text)
            continue
        for index, span in enumerate(spans):
            parts[index + 1].append(_nearest(span, over).text)
    return [" ".join(words) for words in parts]


def _nearest(span: tuple[float, float], cells: Sequence[Cell]) -> Cell:
    middle = (span[0] + span[1]) / 2
    return min(cells, key=lambda cell: abs((cell.x0 + cell.x1) / 2 - middle))
