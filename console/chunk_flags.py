"""Chunks that look wrong, flagged for a person to look at: so a glance at an item's chunks tells
whether the document was read right. Pure: a chunk's stored fields in, the flags' words out."""

from __future__ import annotations

import re

from mnemosyne.library.models import Chunk, ChunkKind

# Fewer characters than this is rarely a passage worth a chunk of its own.
SHORT_CHARS = 50
# OCR'd chunks the recogniser was less sure of than this.
LOW_OCR_CONFIDENCE = 0.8
# "Page 3", "3 of 10", "- 12 -", "Confidential": what runs along a page's edge.
_FURNITURE = re.compile(r"^\W*(?:page\s+)?\d+(?:\s*(?:of|/)\s*\d+)?\W*$|^\W*confidential\W*$", re.IGNORECASE)
# A Markdown table's rule under its header row: "|---|---:|".
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}")


def flags_of(chunk: Chunk) -> list[str]:
    """What looks wrong about the chunk, in words (empty: nothing)."""
    text = chunk.text_preview.strip()
    flags = []
    if chunk.kind == ChunkKind.TEXT and chunk.char_end - chunk.char_start < SHORT_CHARS:
        flags.append("very short")
    if text and all(_FURNITURE.match(line.strip()) for line in text.splitlines() if line.strip()):
        flags.append("page furniture")
    if chunk.ocr_confidence is not None and chunk.ocr_confidence < LOW_OCR_CONFIDENCE:
        flags.append(f"OCR confidence {chunk.ocr_confidence:.2f}")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and lines[0].startswith("|") and not any(_TABLE_RULE.match(line) for line in lines):
        flags.append("table rows without their header")
    return flags
