"""Checks shared by every parser that meets image bytes: size limits, real format, MIME type."""

from __future__ import annotations

import io
import logging
import re

from PIL import Image, UnidentifiedImageError

from mnemosyne.ingestion.documents import ImageAsset, UnreadableFile

logger = logging.getLogger(__name__)

MAX_IMAGE_BYTES = 20 * 1024 * 1024
# Stricter than Pillow's own decompression-bomb limit (about 89 megapixels).
MAX_IMAGE_PIXELS = 50_000_000
MAX_CAPTION_CHARS = 500
# The formats that browsers and vision models take; anything else (TIFF, BMP, JPEG 2000) is skipped.
# MPO is how Pillow names a camera JPEG that carries extra frames.
MIME_TYPES = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "MPO": "image/jpeg",
    "GIF": "image/gif",
    "WEBP": "image/webp",
}

_WHITESPACE = re.compile(r"\s+")


def check_dimensions(width: int, height: int) -> None:
    """Refuse an image whose pixel count could exhaust memory once decoded."""
    if width * height > MAX_IMAGE_PIXELS:
        raise UnreadableFile(
            f"image too large ({width}x{height} pixels; at most {MAX_IMAGE_PIXELS:,} are supported)"
        )


def image_mime_type(data: bytes) -> str:
    """The MIME type of image `data` after checking size and integrity, or UnreadableFile."""
    if len(data) > MAX_IMAGE_BYTES:
        raise UnreadableFile(f"image too large ({len(data):,} bytes; at most {MAX_IMAGE_BYTES:,})")
    try:
        with Image.open(io.BytesIO(data)) as image:
            check_dimensions(*image.size)  # Image.open reads only the header
            image_format = image.format
            image.verify()
    except UnidentifiedImageError as exc:
        raise UnreadableFile("not an image in a format we recognise") from exc
    except Image.DecompressionBombError as exc:
        raise UnreadableFile(f"image too large: {exc}") from exc
    except (OSError, SyntaxError, ValueError) as exc:  # what Pillow raises for damaged data
        raise UnreadableFile(f"damaged image: {exc}") from exc
    mime_type = MIME_TYPES.get(image_format or "")
    if mime_type is None:
        raise UnreadableFile(f"unsupported image format {image_format or 'unknown'}")
    return mime_type


def embedded_image(data: bytes, *, caption: str, page: int | None, char_offset: int) -> ImageAsset | None:
    """An ImageAsset for an image inside a document, or None (logged) when it fails the checks.

    One bad picture should not cost the reader the document's text.
    """
    try:
        mime_type = image_mime_type(data)
    except UnreadableFile as exc:
        logger.warning("skipping an embedded image: %s", exc)
        return None
    return ImageAsset(data, mime_type, clean_caption(caption), page, char_offset)


def clean_caption(caption: str) -> str:
    return _WHITESPACE.sub(" ", caption).strip()[:MAX_CAPTION_CHARS]


def image_marker(caption: str) -> str:
    """How an image shows in a document's text, so its description is searchable where it sits."""
    caption = clean_caption(caption)
    return f"[Image: {caption}]" if caption else "[Image]"
