"""Tables found on a page put in place among the page's blocks, with their caption.

Ruled tables come from the PDF parser (pdf_tables.py), tables without rules from
aligned_tables.py; each becomes a table block, and a table with a title opens a section named by it,
one level below the heading it stands under.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mnemosyne.ingestion.layout.aligned_tables import AlignedTable
from mnemosyne.ingestion.layout.blocks import Block, HeadingMark
from mnemosyne.ingestion.layout.headings import starts_structure
from mnemosyne.ingestion.layout.lines import Line
from mnemosyne.ingestion.tables import markdown_table

_CAPTION = re.compile(r"^(?:table|tab\.)\s*[\w.:-]+", re.IGNORECASE)


def aligned_block(table: AlignedTable) -> Block:
    """A table without rules as a block: its caption (title and unit line), then the table.

    Each line of the Markdown keeps the page lines it came from, so a chunk of the table cites
    the rows it holds. A titled table starts a section named by its title (not printed again:
    the caption says it).
    """
    rows = [table.header_row(), *table.rows]
    lines = markdown_table(rows).split("\n")
    row_lines: list[list[Line]] = [table.header_lines, [], *table.row_lines]
    caption = table.caption
    if caption:
        lines.insert(0, caption)
        row_lines.insert(0, table.title_lines)
    ordered = sorted(table.lines, key=lambda line: (-line.y1, line.x0))
    return Block(
        "table",
        ordered,
        markdown="\n".join(lines),
        row_lines=row_lines,
        section=HeadingMark(0, table.heading, printed=False) if table.heading else None,
    )


def nest_table_sections(blocks: list[Block]) -> list[Block]:
    """Each titled table's section below the last part or item of the document before it ("Item 8.
    Financial Statements"), in the place of any lesser heading after that (a statement after the
    auditor's report stands beside it, not under it)."""
    level, structural = 0, True
    for block in blocks:
        if block.kind == "heading":
            level, structural = block.level, starts_structure(block.title)
        elif block.section is not None and block.kind != "table":
            level, structural = block.section.level, starts_structure(block.section.title)
        elif block.kind == "table" and block.section is not None:
            nested = level + 1 if structural else max(level, 1)
            block.section = HeadingMark(min(6, nested), block.section.title, printed=False)
    return blocks


def covered(table: Block, lines: Sequence[Line]) -> list[Line]:
    """The page's lines inside the table's box."""
    box = table.lines[0]
    return [
        line
        for line in lines
        if line.x0 >= box.x0 - 2 and line.x1 <= box.x1 + 2 and line.y0 >= box.y0 - 2 and line.y1 <= box.y1 + 2
    ]


def in_place(blocks: list[Block], tables: Sequence[Block]) -> list[Block]:
    """The page's blocks with each table where it stands, its caption (above or below) taken in."""
    result = list(blocks)
    for table in sorted(tables, key=lambda block: -block.lines[0].y1):
        top = table.lines[0].y1
        position = next(
            (i for i, block in enumerate(result) if block.kind != "table" and block.lines[0].y1 < top),
            len(result),
        )
        result.insert(position, table)
        if table.row_lines is not None:
            continue  # a table without rules found its title itself
        for neighbour in (position - 1, position + 1):
            if 0 <= neighbour < len(result) and _is_caption(result[neighbour]):
                caption = result.pop(neighbour)
                text = " ".join(line.text.strip() for line in caption.lines)
                table.markdown = f"{text}\n\n{table.markdown}"
                table.lines = [*table.lines, *caption.lines]
                break
    return result


def _is_caption(block: Block) -> bool:
    return block.kind == "paragraph" and bool(_CAPTION.match(block.lines[0].text.strip()))
