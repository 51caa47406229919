"""OCR, for PDF pages without a usable text layer and for image files: offline, from the wheel.

rapidocr-onnxruntime carries its PP-OCRv4 detection and recognition models inside the wheel and
loads them from there (nothing is downloaded). Its angle classifier is left out: on upright pages
it turned whole lines upside down (word accuracy on eight scanned manual pages at 300 dpi: 88.6 %
with it, 97.9 % without, measured when choosing); so a page scanned upside down is not turned.
Each recognised line comes back as a layout Line in the page's own units (PDF points for a PDF
page, pixels for an image file), with its characters' boxes and the recogniser's confidence, its
run-together words split (word_splitting.py).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from PIL import Image

from mnemosyne.ingestion.layout.lines import Line, normalise_chars
from mnemosyne.ingestion.word_splitting import with_spaces

# Recognised lines the recogniser is less sure of than this are dropped (rapidocr's own default).
MIN_CONFIDENCE = 0.5
# Images are read at up to this many pixels a side. rapidocr's default (2,000) shrinks a page
# rendered at 300 dpi (3,300 pixels high) to about 180 dpi, which costs words their spaces: 93.0 %
# word accuracy against 98.7 % unshrunk (docs/benchmarks.md).
MAX_SIDE = 4000

_engine: Any = None
# One recognition at a time: the engine keeps per-call settings on itself.
_lock = threading.Lock()


class OCRUnavailable(Exception):
    """The OCR engine cannot be loaded (rapidocr-onnxruntime or its models missing)."""


# The seconds OCR has spent for the parse running in this thread (clocked), if one is counting.
_SPENT: ContextVar[list[float] | None] = ContextVar("ocr_seconds", default=None)


def _get_engine() -> Any:
    global _engine
    if _engine is None:
        try:
            from rapidocr_onnxruntime import RapidOCR
        except ImportError as exc:
            raise OCRUnavailable(f"OCR needs rapidocr-onnxruntime: {exc}") from exc
        logging.getLogger("RapidOCR").setLevel(logging.WARNING)
        _engine = RapidOCR(max_side_len=MAX_SIDE)
    return _engine


@contextlib.contextmanager
def clocked() -> Iterator[list[float]]:
    """Within the block, the seconds OCR spends in this thread add up in the list's one element
    (the parse's "ocr" stage, parsing.parse_bytes)."""
    spent = [0.0]
    reset = _SPENT.set(spent)
    try:
        yield spent
    finally:
        _SPENT.reset(reset)


def recognise(image: Image.Image, *, page: int, scale: float, height: float) -> list[Line]:
    """The text lines in a picture of a page, top to bottom.

    `scale` converts the image's pixels to the page's units; `height` is the page's height in those
    units (the image's y axis points down, the page's up).
    """
    started = time.perf_counter()
    with _lock:
        result, _ = _get_engine()(image, use_cls=False, return_word_box=True, text_score=MIN_CONFIDENCE)
    spent = _SPENT.get()
    if spent is not None:
        spent[0] += time.perf_counter() - started
    lines = []
    for entry in result or []:
        line = _line(entry, page=page, scale=scale, height=height)
        if line is not None:
            lines.append(line)
    return lines


def _line(entry: list[Any], *, page: int, scale: float, height: float) -> Line | None:
    corners, text, confidence = entry[0], str(entry[1]), float(entry[2])
    if not text.strip():
        return None
    xs = [point[0] * scale for point in corners]
    ys = [point[1] * scale for point in corners]
    x0, x1 = min(xs), max(xs)
    # rapidocr pads its line boxes a little; the glyphs' own boxes, when given, are tighter.
    lefts, rights = _char_extents(entry, text, x0, x1, scale)
    # Words the recogniser ran together ("Eachelementhas") split again (word_splitting.py).
    text, lefts, rights = with_spaces(text, lefts, rights)
    normal, edges = normalise_chars(text, lefts, rights)
    box_height = max(ys) - min(ys)
    return Line(
        page=page,
        text=normal,
        x0=x0,
        y0=height - max(ys),
        x1=x1,
        y1=height - min(ys),
        # A printed line's box is about 1.2 em high.
        size=round(box_height / 1.2, 1),
        edges=edges,
        confidence=round(confidence, 4),
    )


def _char_extents(
    entry: list[Any], text: str, x0: float, x1: float, scale: float
) -> tuple[list[float], list[float]]:
    """Each character's left and right x: from the recogniser's character boxes, else evenly."""
    char_boxes = entry[3] if len(entry) > 3 and isinstance(entry[3], list) else []
    if char_boxes and len(char_boxes) == len(text):
        return (
            [min(point[0] for point in box) * scale for box in char_boxes],
            [max(point[0] for point in box) * scale for box in char_boxes],
        )
    inked = [index for index, char in enumerate(text) if not char.isspace()]
    if char_boxes and len(char_boxes) == len(inked):
        lefts, rights = [0.0] * len(text), [0.0] * len(text)
        for index, box in zip(inked, char_boxes, strict=True):
            lefts[index] = min(point[0] for point in box) * scale
            rights[index] = max(point[0] for point in box) * scale
        # A space sits between its neighbours.
        for index, char in enumerate(text):
            if char.isspace():
                lefts[index] = rights[index - 1] if index else x0
                rights[index] = lefts[index]
        return lefts, rights
    step = (x1 - x0) / max(1, len(text))
    return [x0 + i * step for i in range(len(text))], [x0 + (i + 1) * step for i in range(len(text))]
