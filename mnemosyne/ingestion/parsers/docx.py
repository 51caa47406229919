"""Word documents through python-docx: headings as Markdown headings, tables as pipe tables.

Inline pictures become ImageAssets captioned by the neighbouring caption paragraph or their alt text.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

import docx
from docx.opc.exceptions import PackageNotFoundError
from docx.table import Table
from docx.text.paragraph import Paragraph

from mnemosyne.ingestion.documents import ImageAsset, ParsedDocument, UnreadableFile, title_from_filename
from mnemosyne.ingestion.parsers.archives import check_archive
from mnemosyne.ingestion.parsers.image_data import embedded_image, image_marker
from mnemosyne.ingestion.parsers.pipe_tables import pipe_table
from mnemosyne.text.normalising import normalise_text

_HEADING_STYLE = re.compile(r"heading\s*([1-9])", re.IGNORECASE)
_CAPTION_TEXT = re.compile(r"(?:Figure|FIGURE|Fig\.)\s*\S")


@dataclass(frozen=True)
class _Picture:
    data: bytes
    alt: str
    offset: int  # where its marker sits in the block's text


@dataclass
class _Block:
    text: str
    list_item: bool = False
    caption: str = ""  # the block's text, when it reads as a figure caption
    pictures: list[_Picture] = field(default_factory=list)


def parse_docx(data: bytes, *, filename: str) -> ParsedDocument:
    check_archive(data, "DOCX")
    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError) as exc:
        raise UnreadableFile(f"not a readable DOCX file: {exc}") from exc
    blocks: list[_Block] = []
    title = (document.core_properties.title or "").strip()
    for content in document.iter_inner_content():
        if isinstance(content, Table):
            block = _Block(_table_markdown(content))
        else:
            block = _paragraph_block(content)
            style = _style_name(content)
            if not title and (style == "Title" or _heading_level(style) == 1):
                title = " ".join(content.text.split())
        if block.text:
            blocks.append(block)
    text, images = _assemble(blocks)
    if not text:
        raise UnreadableFile("no readable text in the DOCX file")
    return ParsedDocument(
        title=title or title_from_filename(filename),
        item_type="docx",
        text=text,
        markdown=True,
        images=tuple(images),
    )


def _style_name(paragraph: Paragraph) -> str:
    style = paragraph.style
    return (style.name or "") if style is not None else ""


def _heading_level(style: str) -> int | None:
    match = _HEADING_STYLE.fullmatch(style)
    return int(match.group(1)) if match else None


def _paragraph_block(paragraph: Paragraph) -> _Block:
    style = _style_name(paragraph)
    text = normalise_text(paragraph.text)
    level = _heading_level(style)
    list_item = style.startswith("List")
    if level is not None and text:
        text = f"{'#' * min(level, 6)} {' '.join(text.split())}"
    elif list_item and text:
        text = f"{'1.' if 'Number' in style else '-'} {text}"
    caption = text if "caption" in style.lower() or _CAPTION_TEXT.match(text) else ""
    pictures = []
    for data, alt in _inline_pictures(paragraph):
        text = f"{text} " if text else ""
        pictures.append(_Picture(data, alt, len(text)))
        text += image_marker(alt)
    return _Block(text, list_item=list_item, caption=caption, pictures=pictures)


def _inline_pictures(paragraph: Paragraph) -> list[tuple[bytes, str]]:
    """(bytes, alt text) of each picture stored in the document; linked pictures are never fetched."""
    pictures = []
    for drawing in paragraph._p.xpath(".//w:drawing"):
        properties = drawing.xpath(".//wp:docPr")
        alt = next((p.get("descr") or p.get("title") or "" for p in properties), "")
        for relationship_id in drawing.xpath(".//a:blip/@r:embed"):
            part = paragraph.part.related_parts.get(relationship_id)
            blob = getattr(part, "blob", None)
            if isinstance(blob, bytes):
                pictures.append((blob, alt))
    return pictures


def _table_markdown(table: Table) -> str:
    return pipe_table([[cell.text for cell in row.cells] for row in table.rows])


def _assemble(blocks: list[_Block]) -> tuple[str, list[ImageAsset]]:
    parts: list[str] = []
    images: list[ImageAsset] = []
    length = 0
    for index, block in enumerate(blocks):
        if parts:
            # Consecutive list items stay one paragraph, so the chunker keeps a list together.
            separator = "\n" if block.list_item and blocks[index - 1].list_item else "\n\n"
            parts.append(separator)
            length += len(separator)
        for picture in block.pictures:
            caption = _neighbouring_caption(blocks, index) or picture.alt
            asset = embedded_image(
                picture.data, caption=caption, page=None, char_offset=length + picture.offset
            )
            if asset is not None:
                images.append(asset)
        parts.append(block.text)
        length += len(block.text)
    return "".join(parts), images


def _neighbouring_caption(blocks: list[_Block], index: int) -> str:
    """A caption in the picture's own paragraph, else right after it, else right before it."""
    for neighbour in (index, index + 1, index - 1):
        if 0 <= neighbour < len(blocks) and blocks[neighbour].caption:
            return blocks[neighbour].caption
    return ""
