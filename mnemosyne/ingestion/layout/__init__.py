"""Page layout analysis: from positioned lines of text (a PDF's text layer, or OCR) to a document's
blocks in reading order, without page furniture, with headings, paragraphs, lists, code and tables.

Pure: no PDF library and no database here (the PDF parser and the OCR reader produce the lines),
so every rule is tested on lines made up in the tests as well as on real manuals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mnemosyne.ingestion.layout.assemble import Assembled, assemble
from mnemosyne.ingestion.layout.blocks import Block, document_style, group_blocks, join_pages
from mnemosyne.ingestion.layout.furniture import remove_furniture
from mnemosyne.ingestion.layout.headings import OutlineEntry, font_headings, outline_headings
from mnemosyne.ingestion.layout.lines import Line
from mnemosyne.ingestion.layout.reading import reading_order
from mnemosyne.ingestion.layout.tables import covered, in_place

__all__ = ["Assembled", "Line", "OutlineEntry", "lay_out"]


def lay_out(
    pages: Sequence[Sequence[Line]],
    heights: Sequence[float],
    *,
    outline: Sequence[OutlineEntry] = (),
    tables: Mapping[int, list[Block]] | None = None,
) -> Assembled:
    """The document's text from its pages' lines (page i+1 is pages[i], `heights[i]` high)."""
    style = document_style(pages)
    kept = remove_furniture(pages, heights, spacing=style.spacing)
    ordered = [reading_order(lines) for lines in kept]
    marks = outline_headings(outline, ordered, style) if outline else font_headings(ordered, style)
    blocks = []
    for number, lines in enumerate(ordered, start=1):
        page_tables = (tables or {}).get(number, [])
        hidden = {id(line) for table in page_tables for line in covered(table, lines)}
        page_blocks = group_blocks([line for line in lines if id(line) not in hidden], style, marks)
        blocks.append(in_place(page_blocks, page_tables))
    return assemble(join_pages(blocks), len(pages))
