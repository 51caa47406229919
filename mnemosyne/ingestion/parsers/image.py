"""A standalone picture: the document is the image itself, described by its embedded caption."""

from __future__ import annotations

import io

from PIL import Image

from mnemosyne.ingestion.chunking import normalise_text
from mnemosyne.ingestion.documents import ImageAsset, ParsedDocument, title_from_filename
from mnemosyne.ingestion.parsers.image_data import clean_caption, image_mime_type

_EXIF_IMAGE_DESCRIPTION = 0x010E


def parse_image(data: bytes, *, filename: str) -> ParsedDocument:
    mime_type = image_mime_type(data)  # size, integrity and format checks come first
    description, embedded_title = _described(data)
    title = embedded_title or title_from_filename(filename)
    text = normalise_text(description or title)
    asset = ImageAsset(data, mime_type, caption=text, page=None, char_offset=0)
    return ParsedDocument(title=title, item_type="image", text=text, markdown=False, images=(asset,))


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
