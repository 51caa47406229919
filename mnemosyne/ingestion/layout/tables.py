"""Tables found on a page (by the PDF parser) put in place among the page's blocks, with their caption."""

from __future__ import annotations

import re
from collections.abc import Sequence

from mnemosyne.ingestion.layout.blocks import Block
from mnemosyne.ingestion.layout.lines import Line

_CAPTION = re.compile(r"^(?:table|tab\.)\s*[\w.:-]+", re.IGNORECASE)


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
