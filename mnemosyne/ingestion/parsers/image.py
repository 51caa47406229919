"""A standalone picture: the document is the image itself, described by its embedded caption, and,
when OCR finds text in it (OCR=auto or force), that text too, laid out and located in the image's
pixels, so a scanned page or a screenshot is searchable by what it says."""

from __future__ import annotations

import io
import logging

from django.conf import settings
from PIL import Image

from mnemosyne.ingestion import ocr
from mnemosyne.ingestion.documents import ImageAsset, ParsedDocument, title_from_filename
from mnemosyne.ingestion.layout import Assembled, lay_out
from mnemosyne.ingestion.parsers.image_data import clean_caption, image_mime_type
from mnemosyne.text.normalising import normalise_text

logger = logging.getLogger(__name__)

_EXIF_IMAGE_DESCRIPTION = 0x010E


# OCR text with fewer letters and digits than this is noise, not text.
MIN_OCR_CHARS = 16


def parse_image(data: bytes, *, filename: str) -> ParsedDocument:
    mime_type = image_mime_type(data)  # size, integrity and format checks come first
    description, embedded_title = _described(data)
    title = embedded_title or title_from_filename(filename)
    caption = normalise_text(description or title)
    asset = ImageAsset(data, mime_type, caption=caption, page=None, char_offset=0)
    read = _read_text(data) if settings.OCR != "off" else None
    if read is None:
        return ParsedDocument(title=title, item_type="image", text=caption, markdown=False, images=(asset,))
    return ParsedDocument(
        title=title,
        item_type="image",
        text=read.text,
        markdown=False,
        page_starts=read.page_starts,
        images=(asset,),
        headings=read.headings,
        boxes=read.boxes,
        ocr_pages=(1,),
    )


def _read_text(data: bytes) -> Assembled | None:
    """The text OCR finds in the image, laid out (in pixels, y up), or None when it finds none."""
    with Image.open(io.BytesIO(data)) as image:
        pixels = image.convert("RGB")
    try:
        lines = ocr.recognise(pixels, page=1, scale=1.0, height=float(pixels.height))
    except ocr.OCRUnavailable as exc:
        logger.warning("an image could have been read by OCR, which is unavailable: %s", exc)
        return None
    if sum(char.isalnum() for line in lines for char in line.text) < MIN_OCR_CHARS:
        return None
    return lay_out([lines], [float(pixels.height)])


def _described(data: bytes) -> tuple[str, str]:
    """(description, title) from EXIF ImageDescription or PNG text chunks; empty when absent."""
    with Image.open(io.BytesIO(data)) as image:
        # `info` holds the text chunks read with the header, without decoding the pixels.
        info = {key.lower(): value for key, value in image.info.items() if isinstance(key, str)}
        exif_description = image.getexif().get(_EXIF_IMAGE_DESCRIPTION)
    description = _as_text(exif_description) or _as_text(info.get("description"))
    description = description or _as_text(info.get("comment"))  # GIF comments
    return description, _as_text(info.get("title"))


def _as_text(value: object) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    return clean_caption(value.replace("\x00", "")) if isinstance(value, str) else ""
