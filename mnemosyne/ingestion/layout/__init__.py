"""Page layout analysis: from positioned lines of text (a PDF's text layer, or OCR) to a document's
blocks in reading order, without page furniture, with headings, paragraphs, lists, code and tables.

Pure: no PDF library and no database here (the PDF parser and the OCR reader produce the lines),
so every rule is tested on lines made up in the tests as well as on real manuals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mnemosyne.ingestion.layout.aligned_tables import find_tables
from mnemosyne.ingestion.layout.assemble import Assembled, assemble
from mnemosyne.ingestion.layout.blocks import Block, document_style, group_blocks, join_pages
from mnemosyne.ingestion.layout.furniture import remove_furniture
from mnemosyne.ingestion.layout.headings import OutlineEntry, font_headings, outline_headings
from mnemosyne.ingestion.layout.lines import Line
from mnemosyne.ingestion.layout.reading_order import reading_order
from mnemosyne.ingestion.layout.tables import aligned_block, covered, in_place, nest_table_sections

__all__ = ["Assembled", "Line", "OutlineEntry", "lay_out"]


def lay_out(
    pages: Sequence[Sequence[Line]],
    heights: Sequence[float],
    *,
    outline: Sequence[OutlineEntry] = (),
    tables: Mapping[int, list[Block]] | None = None,
    widths: Sequence[float] | None = None,
) -> Assembled:
    """The document's text from its pages' lines (page i+1 is pages[i], `heights[i]` high).

    `tables` holds the ruled tables already read from a page; tables without rules (aligned
    columns of numbers) are found here, before headings, so that a table's header row is never
    taken for a heading and its title becomes the section of the page.
    """
    style = document_style(pages)
    kept = remove_furniture(pages, heights, spacing=style.spacing)
    page_tables: list[list[Block]] = []
    flowing: list[list[Line]] = []
    for number, lines in enumerate(kept, start=1):
        ruled = list((tables or {}).get(number, []))
        hidden = {id(line) for table in ruled for line in covered(table, lines)}
        rest = [line for line in lines if id(line) not in hidden]
        width = widths[number - 1] if widths else _width(lines)
        aligned = [aligned_block(table) for table in find_tables(rest, width)]
        hidden |= {id(line) for block in aligned for line in block.lines}
        page_tables.append(ruled + aligned)
        flowing.append([line for line in lines if id(line) not in hidden])
    ordered = [reading_order(lines) for lines in flowing]
    marks = outline_headings(outline, ordered, style) if outline else font_headings(ordered, style)
    blocks = [
        in_place(group_blocks(lines, style, marks), found)
        for lines, found in zip(ordered, page_tables, strict=True)
    ]
    return assemble(nest_table_sections(join_pages(blocks)), len(pages))


def _width(lines: Sequence[Line]) -> float:
    """A page's width guessed from its text, as wide as its margins (for a page read by OCR)."""
    if not lines:
        return 0.0
    return max(line.x1 for line in lines) + min(line.x0 for line in lines)
