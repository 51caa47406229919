"""Lines to blocks: headings, paragraphs, lists, code, and tables, on a page and across page breaks.

A line continues the block before it when it looks the same and follows it closely:

- **code**: lines set in a monospaced font, gaps up to CODE_GAP line spacings;
- **list**: a line opening with a bullet or an enumerator ("•", "-", "1.", "a)", "(iv)") starts an
  item (whatever its type); lines indented under it continue the item; items up to LIST_GAP line
  spacings apart follow each other in one list;
- **paragraph**: the rest; a new one starts after a wider gap than PARAGRAPH_GAP line spacings,
  after a line that ends short with a full stop, or at an indented first line after a full stop;
- **heading**: a line marked as one (by the outline, or by its font: headings.py), with the lines
  of the same heading that wrap under it;
- **table**: given whole (tables.py), in place of the lines it covers.

Blocks then join across a page break when the page ends mid-paragraph (on a full line without a
full stop, or the next page going on in lower case), mid-list or mid-code: a paragraph or a list
that continues over a page break stays one block (and so one chunk, citing both pages).
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mnemosyne.ingestion.layout.lines import Line

PARAGRAPH_GAP = 1.45
CODE_GAP = 2.6
LIST_GAP = 2.0
# A line ending this far short of the column's right edge (in points) ends its paragraph when it
# ends a sentence.
SHORT_LINE = 20.0
# A first line indented by at least this much (points) opens a paragraph.
INDENT = 6.0

_ITEM = re.compile(r"^(?:[•◦▪▫●○■□‣⁃∙·*–—-]|\(?(?:\d{1,3}|[a-zA-Z]|[ivxIVX]{1,5})[.)])\s+\S")
_SENTENCE_END = re.compile(r"[.!?:;][\"')\]’”]*$")
_CAPTION = re.compile(r"^(?:figure|fig\.|table|tab\.)\s*\d", re.IGNORECASE)


@dataclass(frozen=True)
class Style:
    """The document's body text: its font size, and the distance between its lines (points)."""

    body_size: float
    spacing: float


@dataclass(frozen=True)
class HeadingMark:
    level: int
    title: str
    # False: the title is not printed; the marked line starts the section as the text it is.
    printed: bool = True


@dataclass
class Block:
    kind: str  # heading, paragraph, list, code, table
    lines: list[Line] = field(default_factory=list)
    level: int = 0  # a heading's level, 1 = top
    title: str = ""  # a heading's title (the outline's, when it has one)
    markdown: str = ""  # a table, as a Markdown table (with its caption, if any)
    # A section that starts here without a printed heading (an outline entry not found on its page).
    section: HeadingMark | None = None
    # The right edge of its page's text (points): a paragraph's last line reaching it is full.
    right: float = 0.0
    # A table read from the page's lines: the lines behind each line of `markdown`.
    row_lines: list[list[Line]] | None = None

    @property
    def pages(self) -> tuple[int, int]:
        return self.lines[0].page, self.lines[-1].page


def document_style(pages: Sequence[Sequence[Line]]) -> Style:
    """The most common font size (by characters) and line spacing of the document."""
    sizes: Counter[float] = Counter()
    gaps: list[float] = []
    for lines in pages:
        for line in lines:
            sizes[round(line.size * 2) / 2] += len(line.text)
        for above, below in itertools.pairwise(lines):
            gap = above.y0 - below.y0
            if 0 < gap < 3 * max(above.height, 1.0) and abs(above.size - below.size) < 0.6:
                gaps.append(gap)
    body = sizes.most_common(1)[0][0] if sizes else 10.0
    spacing = statistics.median(gaps) if gaps else body * 1.2
    return Style(body_size=body, spacing=spacing)


def is_item_start(text: str) -> bool:
    return bool(_ITEM.match(text))


def group_blocks(lines: Sequence[Line], style: Style, headings: Mapping[int, HeadingMark]) -> list[Block]:
    """One page's lines (in reading order, furniture removed) as blocks."""
    blocks: list[Block] = []
    right = max((line.x1 for line in lines if not line.mono), default=0.0)
    for line in lines:
        mark = headings.get(id(line))
        current = blocks[-1] if blocks else None
        if mark is not None and not mark.printed:
            kind = "list" if is_item_start(line.text) else "code" if line.mono else "paragraph"
            blocks.append(Block(kind, [line], section=mark))
            continue
        if mark is not None:
            if current is not None and current.kind == "heading" and current.title == mark.title:
                current.lines.append(line)  # the outline's title wrapping over two lines
            else:
                blocks.append(Block("heading", [line], level=mark.level, title=mark.title))
            continue
        if current is not None and continues(current, line, style, right):
            current.lines.append(line)
            continue
        kind = "list" if is_item_start(line.text) else "code" if line.mono else "paragraph"
        blocks.append(Block(kind, [line]))
    for block in blocks:
        block.right = right
    return blocks


def continues(block: Block, line: Line, style: Style, right: float) -> bool:
    """Whether `line` belongs to `block`, the block just before it on the same page."""
    last = block.lines[-1]
    gap = last.y0 - line.y0  # baseline to baseline, positive going down the page
    if gap <= 0 or block.kind in ("heading", "table"):
        return False
    item = is_item_start(line.text)
    if block.kind == "code":
        return line.mono and not item and gap <= CODE_GAP * style.spacing
    if block.kind == "list":
        # A new item (items may be set in code type), or a line indented under the current item.
        if item:
            return gap <= LIST_GAP * style.spacing
        return line.x0 > _item_start(block) + 1.0 and gap <= PARAGRAPH_GAP * style.spacing
    if line.mono or gap > PARAGRAPH_GAP * style.spacing:
        return False
    ends_sentence = bool(_SENTENCE_END.search(last.text))
    if ends_sentence and last.x1 < right - SHORT_LINE:
        return False
    indented = line.x0 > min(other.x0 for other in block.lines) + INDENT
    return not (ends_sentence and indented) and not item


def _item_start(block: Block) -> float:
    """The left edge of the current item's first line."""
    for line in reversed(block.lines):
        if is_item_start(line.text):
            return line.x0
    return block.lines[0].x0


def join_pages(pages: Sequence[list[Block]]) -> list[Block]:
    """All pages' blocks in order, a block that runs on over a page break joined with its rest."""
    joined: list[Block] = []
    for blocks in pages:
        for position, block in enumerate(blocks):
            previous = joined[-1] if joined else None
            if position == 0 and previous is not None and block.section is None and _runs_on(previous, block):
                previous.lines.extend(block.lines)
            else:
                joined.append(block)
    return joined


def _runs_on(before: Block, after: Block) -> bool:
    if before.kind != after.kind or before.kind in ("heading", "table"):
        return False
    if before.kind in ("code", "list"):
        return True
    last, first = before.lines[-1], after.lines[0].text
    if _SENTENCE_END.search(last.text) or _CAPTION.match(last.text.strip()):
        return False
    # A paragraph runs on when its page ends on a full line, or the next page goes on in lower case.
    return last.x1 >= before.right - SHORT_LINE or first[:1].islower()
