"""Spreadsheets: each XLSX sheet (openpyxl, values as last computed) a section holding its rows as
one pipe table, its first rows of a single cell (a title, a unit line) the table's caption and the
next non-empty row the header; a CSV or TSV file (the standard library's csv, dialect sniffed) one
table. The chunker cuts a long table between rows and repeats the caption and header in every
chunk, so each chunk reads on its own."""

from __future__ import annotations

import csv
import datetime
import io
import zipfile
from collections.abc import Iterable, Sequence
from typing import Any

import openpyxl
from openpyxl.utils.exceptions import InvalidFileException

from mnemosyne.ingestion.documents import ParsedDocument, UnreadableFile, title_from_filename
from mnemosyne.ingestion.parsers.archives import check_archive
from mnemosyne.ingestion.parsers.pipe_tables import pipe_table
from mnemosyne.ingestion.text_encodings import decode_text
from mnemosyne.text.normalising import normalise_text

# Cells read from one file at most; the rest is left out and the text says so.
MAX_CELLS = 500_000
# Rows of a single cell above a sheet's table taken as its caption (title, unit line).
MAX_CAPTION_ROWS = 3


def parse_xlsx(data: bytes, *, filename: str) -> ParsedDocument:
    check_archive(data, "XLSX")
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (InvalidFileException, KeyError, ValueError, OSError, zipfile.BadZipFile) as exc:
        raise UnreadableFile(f"not a readable XLSX file: {exc}") from exc
    sections = []
    budget = MAX_CELLS
    try:
        for sheet in workbook.worksheets:
            rows, budget = _bounded(
                ([_cell(value) for value in row] for row in sheet.iter_rows(values_only=True)), budget
            )
            table = _table(rows)
            if table:
                sections.append(f"## Sheet: {sheet.title}\n\n{table}")
            if budget <= 0:
                sections.append(f"(Only the first {MAX_CELLS:,} cells were read.)")
                break
        title = (workbook.properties.title or "").strip()
    finally:
        workbook.close()
    return _document(sections, title or title_from_filename(filename), "xlsx", "XLSX")


def parse_csv(data: bytes, *, filename: str) -> ParsedDocument:
    text = decode_text(data)
    sample = text[:65536]
    try:
        dialect: Any = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel_tab if filename.lower().endswith(".tsv") else csv.excel
    try:
        rows, budget = _bounded(csv.reader(io.StringIO(text), dialect), MAX_CELLS)
    except csv.Error as exc:
        raise UnreadableFile(f"not a readable CSV file: {exc}") from exc
    sections = [_table(rows)]
    if budget <= 0:
        sections.append(f"(Only the first {MAX_CELLS:,} cells were read.)")
    return _document(sections, title_from_filename(filename), "csv", "CSV")


def _bounded(rows: Iterable[list[str]], budget: int) -> tuple[list[list[str]], int]:
    kept = []
    for row in rows:
        if budget <= 0:
            break
        kept.append(row)
        budget -= max(len(row), 1)
    return kept, budget


def _table(rows: Sequence[list[str]]) -> str:
    """The rows without empty ones and without trailing empty columns, as a pipe table; rows of one
    cell above it (a title, a unit line: "Balance sheet", "(in millions)") its caption, which the
    chunker repeats with the header in every part of a long table."""
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    caption: list[str] = []
    while (
        len(rows) > 1 and len(caption) < MAX_CAPTION_ROWS and sum(1 for cell in rows[0] if cell.strip()) == 1
    ):
        caption.append(" ".join(" ".join(cell for cell in rows[0] if cell.strip()).split()))
        rows = rows[1:]
    if not rows:
        return ""
    width = max(max((index + 1 for index, cell in enumerate(row) if cell.strip()), default=0) for row in rows)
    table = pipe_table([row[:width] for row in rows])
    return "\n".join([*caption, table])


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime.datetime) and value.time() == datetime.time():
        return value.date().isoformat()
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return str(value)


def _document(sections: list[str], title: str, item_type: str, kind: str) -> ParsedDocument:
    text = normalise_text("\n\n".join(section for section in sections if section))
    if not text:
        raise UnreadableFile(f"no readable cells in the {kind} file")
    return ParsedDocument(title=title, item_type=item_type, text=text, markdown=True)
