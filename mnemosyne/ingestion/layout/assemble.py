"""Blocks to the document's text, remembering where on which page every line of it came from.

Blocks are separated by a blank line. A paragraph's lines are joined with spaces, a word broken
with a hyphen at a line's end joined again ("exam-" + "ple"); a list keeps one item per line; code
keeps its lines and their indentation; a table is its Markdown. Each line's stretch of the text is
recorded as a TextBox (page, bounding box, per-character edges, OCR confidence), from which a chunk
gets its pages and the boxes a client can highlight.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field

from mnemosyne.ingestion.documents import Heading, TextBox
from mnemosyne.ingestion.layout.blocks import Block, is_item_start
from mnemosyne.ingestion.layout.lines import Line

_BROKEN_WORD = re.compile(r"[^\W\d_]-$")


@dataclass
class Assembled:
    text: str
    # Offset in `text` where page i+1 starts (a page without text: where the next text starts).
    page_starts: tuple[int, ...]
    headings: tuple[Heading, ...]
    boxes: tuple[TextBox, ...]


@dataclass
class _Writer:
    parts: list[str] = field(default_factory=list)
    length: int = 0
    boxes: list[TextBox] = field(default_factory=list)

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.length += len(text)

    def write_line(self, line: Line, text: str) -> None:
        """Part of a line's text (its first len(text) characters), with its box."""
        start = self.length
        self.write(text)
        edges = array("f", [line.edge(i) for i in range(len(text) + 1)])
        self.boxes.append(
            TextBox(start, self.length, line.page, line.x0, line.y0, line.x1, line.y1, edges, line.confidence)
        )


def assemble(blocks: list[Block], page_count: int) -> Assembled:
    writer = _Writer()
    headings: list[Heading] = []
    for block in blocks:
        if writer.length:
            writer.write("\n\n")
        if block.section is not None:
            headings.append(
                Heading(offset=writer.length, level=block.section.level, title=block.section.title)
            )
        if block.kind == "heading":
            start = writer.length
            _joined(writer, block.lines, hyphenation=False)
            headings.append(Heading(offset=start, level=block.level, title=block.title, end=writer.length))
        elif block.kind == "table":
            _table(writer, block)
        elif block.kind == "code":
            _code(writer, block.lines)
        elif block.kind == "list":
            _list(writer, block.lines)
        else:
            _joined(writer, block.lines, hyphenation=True)
    return Assembled(
        text="".join(writer.parts),
        page_starts=_page_starts(writer.boxes, page_count, writer.length),
        headings=tuple(headings),
        boxes=tuple(writer.boxes),
    )


def _joined(writer: _Writer, lines: list[Line], *, hyphenation: bool) -> None:
    for index, line in enumerate(lines):
        text = line.text.strip()
        following = lines[index + 1].text.lstrip() if index + 1 < len(lines) else ""
        broken = hyphenation and bool(_BROKEN_WORD.search(text)) and following[:1].islower()
        writer.write_line(line, text[:-1] if broken else text)
        if following and not broken:
            writer.write(" ")


def _list(writer: _Writer, lines: list[Line]) -> None:
    for index, line in enumerate(lines):
        if index and is_item_start(line.text.lstrip()):
            writer.write("\n")
        elif index:
            writer.write(" ")
        writer.write_line(line, line.text.strip())


def _code(writer: _Writer, lines: list[Line]) -> None:
    left = min(line.x0 for line in lines)
    for index, line in enumerate(lines):
        if index:
            writer.write("\n")
        width = max(line.size * 0.6, 1.0)  # a monospaced character is about 0.6 em wide
        writer.write(" " * min(40, max(0, round((line.x0 - left) / width))))
        writer.write_line(line, line.text.rstrip())


def _table(writer: _Writer, block: Block) -> None:
    if block.row_lines is not None:
        _table_by_rows(writer, block)
        return
    start = writer.length
    writer.write(block.markdown)
    pages = {line.page for line in block.lines}
    x0 = min(line.x0 for line in block.lines)
    y0 = min(line.y0 for line in block.lines)
    x1 = max(line.x1 for line in block.lines)
    y1 = max(line.y1 for line in block.lines)
    for page in sorted(pages):
        writer.boxes.append(TextBox(start, writer.length, page, x0, y0, x1, y1))


def _table_by_rows(writer: _Writer, block: Block) -> None:
    """Each line of the table's Markdown with the box around the page lines it came from."""
    assert block.row_lines is not None
    for index, (text, lines) in enumerate(zip(block.markdown.split("\n"), block.row_lines, strict=True)):
        if index:
            writer.write("\n")
        start = writer.length
        writer.write(text)
        if lines:
            box = TextBox(
                start,
                writer.length,
                lines[0].page,
                min(line.x0 for line in lines),
                min(line.y0 for line in lines),
                max(line.x1 for line in lines),
                max(line.y1 for line in lines),
            )
            writer.boxes.append(box)


def _page_starts(boxes: list[TextBox], page_count: int, length: int) -> tuple[int, ...]:
    starts = [length] * page_count
    for box in boxes:
        if 1 <= box.page <= page_count:
            starts[box.page - 1] = min(starts[box.page - 1], box.start)
    # A page without text starts where the next page's text does.
    for index in range(page_count - 2, -1, -1):
        starts[index] = min(starts[index], starts[index + 1])
    return tuple(starts)
