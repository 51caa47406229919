"""Images in PDFs, through PDFium: each with where it sits, its caption, and its place in the text.

An image's pixel size is checked before it is decoded (a bomb is skipped with a warning, the page's
text kept); specks (under MIN_SIDE pixels both ways) are passed over. Its caption is a "Figure …"
line on its page, the one nearest it (and it is placed in the text where that line is), else the
opening of its page's text (and it is placed where the page starts).
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from mnemosyne.ingestion.documents import ImageAsset, TextBox, UnreadableFile
from mnemosyne.ingestion.parsers.image_data import check_dimensions, embedded_image

logger = logging.getLogger(__name__)

MIN_SIDE = 16
FALLBACK_CAPTION_CHARS = 200
_FIGURE = re.compile(r"^(?:figure|fig\.)\s*\S", re.IGNORECASE)


@dataclass(frozen=True)
class PlacedImage:
    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    data: bytes = field(repr=False)


def has_images(page: pdfium.PdfPage) -> bool:
    return any(True for _ in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=3))


def scan_dpi(page: pdfium.PdfPage) -> float | None:
    """The resolution of the page's largest picture (pixels per inch as placed), None without one:
    a scanned page's is the scanner's."""
    largest: tuple[float, float] | None = None
    for image in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=3):
        left, bottom, right, top = image.get_bounds()
        area = (right - left) * (top - bottom)
        if right - left > 0 and (largest is None or area > largest[0]):
            largest = (area, image.get_px_size()[0] / ((right - left) / 72))
    return largest[1] if largest is not None else None


def placed(page: pdfium.PdfPage, number: int) -> list[PlacedImage]:
    found = []
    try:
        objects = list(page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=3))
    except Exception:
        logger.warning("cannot list the images on page %d", number, exc_info=True)
        return []
    for image in objects:
        try:
            width, height = image.get_px_size()
            if max(width, height) < MIN_SIDE:
                continue
            check_dimensions(width, height)  # before the pixels are decoded
            left, bottom, right, top = image.get_bounds()
            data = _encoded(image)
        except UnreadableFile as exc:
            logger.warning("skipping an image on page %d: %s", number, exc)
            continue
        except Exception:
            # PDFium cannot decode every image filter; the page's text still counts.
            logger.warning("skipping an image on page %d that cannot be decoded", number, exc_info=True)
            continue
        found.append(PlacedImage(number, left, bottom, right, top, data))
    return found


def _encoded(image: pdfium.PdfImage) -> bytes:
    """A JPEG as it is stored; anything else decoded and written as PNG."""
    if image.get_filters() == ["DCTDecode"]:
        return bytes(image.get_data(decode_simple=False))
    buffer = io.BytesIO()
    image.get_bitmap(render=False).to_pil().save(buffer, format="PNG")
    return buffer.getvalue()


def asset(image: PlacedImage, text: str, boxes: Sequence[TextBox], page_start: int) -> ImageAsset | None:
    """The image as an asset of the document: captioned, placed in the text."""
    figures = [box for box in boxes if box.page == image.page and _FIGURE.match(text[box.start : box.end])]
    if figures:
        nearest = min(figures, key=lambda box: min(abs(box.y1 - image.y0), abs(box.y0 - image.y1)))
        caption, offset = text[nearest.start : nearest.end], nearest.start
    else:
        caption, offset = text[page_start : page_start + FALLBACK_CAPTION_CHARS], page_start
    return embedded_image(image.data, caption=caption, page=image.page, char_offset=offset)
