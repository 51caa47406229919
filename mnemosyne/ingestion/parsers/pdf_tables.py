"""Ruled tables in PDFs, through pdfplumber's table finder: each a Markdown table, kept whole.

Only pages whose ruling could make a grid are handed to pdfplumber (it reads a page about 50 times
slower than PDFium): at least three distinct rule positions across and three down, so a framed code
listing or a rule under a heading costs nothing. Only a clean grid is taken (at least two rows and
two columns, few empty cells): a partly ruled layout that pdfplumber cuts into
a garbled grid is better left as the text it is. The lines a table covers leave the page's text
flow; the table takes their place (layout.tables), with its caption when one sits beside it.
"""

from __future__ import annotations

import logging
import unicodedata
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from mnemosyne.ingestion.layout.blocks import Block
from mnemosyne.ingestion.layout.lines import Line
from mnemosyne.ingestion.tables import markdown_table

logger = logging.getLogger(__name__)

# A grid of two rows and two columns has three rules each way.
MIN_RULES = 3
# A path thinner than this (points) is a rule; thicker, a box with four edges.
RULE_WIDTH = 3.0
# A path object with this many segments may draw a whole grid in one go.
GRID_SEGMENTS = 8
# A grid with more empty cells than this share is not taken as a table.
MAX_EMPTY_SHARE = 0.2


def worth_a_look(page: pdfium.PdfPage) -> bool:
    """Whether the page's rules and boxes could form a grid of at least two rows and two columns."""
    across: set[int] = set()  # x positions of vertical edges
    down: set[int] = set()  # y positions of horizontal edges
    for path in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_PATH,), max_depth=2):
        left, bottom, right, top = path.get_bounds()
        wide, high = right - left, top - bottom
        if wide > RULE_WIDTH and high > RULE_WIDTH:
            if pdfium_c.FPDFPath_CountSegments(path.raw) >= GRID_SEGMENTS:
                return True
            across.update((round(left), round(right)))
            down.update((round(bottom), round(top)))
        elif wide > RULE_WIDTH:
            down.add(round(bottom))
        elif high > RULE_WIDTH:
            across.add(round(left))
        if len(across) >= MIN_RULES and len(down) >= MIN_RULES:
            return True
    return False


class TableFinder:
    """Finds tables page by page, opening the PDF with pdfplumber only once a page needs it."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pdf: Any = None

    def find(self, index: int, height: float) -> list[Block]:
        try:
            if self._pdf is None:
                import io

                import pdfplumber

                self._pdf = pdfplumber.open(io.BytesIO(self._data))
            page = self._pdf.pages[index]
            found = [_block(table, index + 1, height) for table in page.find_tables()]
        except Exception:
            # A table that cannot be read stays as the text it is.
            logger.warning("cannot read the tables on page %d", index + 1, exc_info=True)
            return []
        return [block for block in found if block is not None]

    def close(self) -> None:
        if self._pdf is not None:
            self._pdf.close()


def _block(table: Any, page: int, height: float) -> Block | None:
    rows = [[_cell(cell) for cell in row] for row in table.extract()]
    rows = [row for row in rows if any(row)]
    if len(rows) < 2 or min(len(row) for row in rows) < 2:
        return None
    cells = [cell for row in rows for cell in row]
    if sum(1 for cell in cells if not cell) > MAX_EMPTY_SHARE * len(cells):
        return None
    x0, top, x1, bottom = table.bbox  # pdfplumber measures from the top
    box = Line(page=page, text="", x0=x0, y0=height - bottom, x1=x1, y1=height - top)
    return Block("table", [box], markdown=markdown_table(rows))


def _cell(value: object) -> str:
    text = unicodedata.normalize("NFKC", str(value or ""))
    return " ".join(text.split()).replace("|", "\\|")
