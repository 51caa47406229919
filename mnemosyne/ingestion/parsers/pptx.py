"""Slide decks through python-pptx: one section per slide ("Slide 3: Its title"), its text frames
in reading order (top to bottom, left to right; bullets kept as list items), its tables as pipe
tables, and its speaker notes under "Speaker notes"."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Iterator

import pptx
from pptx.exc import PackageNotFoundError
from pptx.shapes.base import BaseShape
from pptx.shapes.group import GroupShape
from pptx.slide import Slide

from mnemosyne.ingestion.documents import ParsedDocument, UnreadableFile, title_from_filename
from mnemosyne.ingestion.parsers.archives import check_archive
from mnemosyne.ingestion.parsers.pipe_tables import pipe_table
from mnemosyne.text.normalising import normalise_text


def parse_pptx(data: bytes, *, filename: str) -> ParsedDocument:
    check_archive(data, "PPTX")
    try:
        presentation = pptx.Presentation(io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise UnreadableFile(f"not a readable PPTX file: {exc}") from exc
    sections: list[str] = []
    first_title = ""
    for number, slide in enumerate(presentation.slides, start=1):
        title = _slide_title(slide)
        first_title = first_title or title
        body = [block for block in _blocks(_reading_order(slide.shapes), skip=slide.shapes.title) if block]
        notes = _notes(slide)
        if notes:
            body.append(f"Speaker notes: {notes}")
        if body or title:
            heading = f"## Slide {number}: {title}" if title else f"## Slide {number}"
            sections.append("\n\n".join([heading, *body]))
    text = normalise_text("\n\n".join(sections))
    if not text:
        raise UnreadableFile("no readable text in the PPTX file")
    title = (presentation.core_properties.title or "").strip() or first_title
    return ParsedDocument(
        title=title or title_from_filename(filename), item_type="pptx", text=text, markdown=True
    )


def _slide_title(slide: Slide) -> str:
    shape = slide.shapes.title
    return " ".join(shape.text_frame.text.split()) if shape is not None and shape.has_text_frame else ""


def _reading_order(shapes: Iterable[BaseShape]) -> list[BaseShape]:
    return sorted(shapes, key=lambda shape: (shape.top or 0, shape.left or 0))


def _blocks(shapes: Iterable[BaseShape], *, skip: BaseShape | None) -> Iterator[str]:
    for shape in shapes:
        if skip is not None and shape.shape_id == skip.shape_id:
            continue
        if isinstance(shape, GroupShape):
            yield from _blocks(_reading_order(shape.shapes), skip=None)
        elif getattr(shape, "has_table", False):
            table = shape.table  # type: ignore[attr-defined]
            yield pipe_table([[cell.text for cell in row.cells] for row in table.rows])
        elif shape.has_text_frame:
            yield _text_frame(shape)


def _text_frame(shape: BaseShape) -> str:
    lines = []
    paragraphs = list(shape.text_frame.paragraphs)  # type: ignore[attr-defined]
    bulleted = len([p for p in paragraphs if p.text.strip()]) > 1
    for paragraph in paragraphs:
        text = " ".join(paragraph.text.split())
        if text:
            lines.append(f"{'  ' * paragraph.level}- {text}" if bulleted else text)
    return "\n".join(lines)


def _notes(slide: Slide) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    return " ".join(frame.text.split()) if frame is not None else ""
