"""Where a chunk of a PDF was printed: its pages, its line boxes, and (OCR) how sure the reader was.

From the document's TextBoxes (one per printed line, each a stretch of the text): a chunk's pages
are those of the lines it overlaps, first and last; its locations are those lines' boxes, cut to
the characters the chunk holds where it starts or ends mid-line; an OCR'd chunk's confidence is the
mean over its OCR'd lines. Pure.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import replace

from mnemosyne.ingestion.chunking import ChunkSpan
from mnemosyne.ingestion.documents import TextBox


def located(boxes: Sequence[TextBox]) -> Callable[[ChunkSpan], ChunkSpan]:
    """A function giving a span its pages, locations and OCR confidence from `boxes` (text order)."""
    ordered = sorted(boxes, key=lambda box: box.start)
    starts = [box.start for box in ordered]

    def locate(span: ChunkSpan) -> ChunkSpan:
        first = max(0, bisect.bisect_right(starts, span.char_start) - 1)
        overlapping = []
        for box in ordered[first:]:
            if box.start >= span.char_end:
                break
            if box.end > span.char_start:
                overlapping.append(box)
        if not overlapping:
            return span
        pages = [box.page for box in overlapping]
        locations = []
        for box in overlapping:
            x0, x1 = box.span(span.char_start, span.char_end)
            locations.append((box.page, round(x0, 1), round(box.y0, 1), round(x1, 1), round(box.y1, 1)))
        confidences = [box.confidence for box in overlapping if box.confidence is not None]
        return replace(
            span,
            page=min(pages),
            page_end=max(pages) if max(pages) != min(pages) else None,
            locations=tuple(locations),
            ocr_confidence=round(sum(confidences) / len(confidences), 4) if confidences else None,
        )

    return locate
