"""An item's normalised text as its chunks cover it, for the chunk inspector: each chunk's own part
of the text in order, what it shares with the chunk before (the overlap) marked apart, and the
boundaries between chunks drawn. Text the chunks do not cover (page furniture dropped, a gap)
shows as a gap of so many characters. Pure once the texts are read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mnemosyne.library.chunk_reads import chunk_text
from mnemosyne.library.models import Chunk

# Chunks whose text is read for one page of the inspector.
CHUNKS_PER_PAGE = 100
# Text between two chunks shorter than this is a separator (blank lines between sections), not a gap.
GAP_SHOWN = 10


@dataclass(frozen=True)
class Piece:
    chunk: Chunk
    # Characters of the item's text not covered by any chunk before this one (0: none).
    gap: int
    # The start of the chunk's text that the chunk before it holds too.
    overlap: str
    # The rest: this chunk's own text.
    text: str


def pieces(chunks: Sequence[Chunk]) -> list[Piece]:
    """The chunks (in ordinal order) as consecutive pieces of their item's text."""
    found = []
    covered = None  # where the text read so far ends (char offset)
    for chunk in chunks:
        text = chunk_text(chunk)
        overlap_chars, gap = 0, 0
        if covered is not None:
            if chunk.char_start < covered:
                overlap_chars = _overlap(text, chunk.char_start, chunk.char_end, covered)
            elif chunk.char_start - covered >= GAP_SHOWN:
                gap = chunk.char_start - covered
        found.append(Piece(chunk, gap, text[:overlap_chars], text[overlap_chars:]))
        covered = max(covered or 0, chunk.char_end)
    return found


def _overlap(text: str, start: int, end: int, covered: int) -> int:
    """How many of the chunk's first characters the text before it already covers: exact when the
    chunk's text is its span of the item's text (a table's repeated header is not: then none)."""
    if len(text) != end - start:
        return 0
    return min(covered - start, len(text))
