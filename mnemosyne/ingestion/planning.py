"""From a parsed document to the chunks to store: text chunks with pages, and image chunks.

Pure: no database, no model. An image chunk's text is its caption plus the text around the
image, which is what makes it searchable; the image bytes go to the ChunkStore beside it.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from mnemosyne.ingestion.chunking import ChunkSpan, TokenLocator, assign_pages, chunk_text
from mnemosyne.ingestion.documents import Heading, ImageAsset, ParsedDocument
from mnemosyne.ingestion.locations import located
from mnemosyne.library.sections import SECTION_SEPARATOR

# Characters of surrounding text kept with an image's caption.
IMAGE_CONTEXT_CHARS = 300
IMAGE_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


@dataclass(frozen=True)
class PlannedChunk:
    span: ChunkSpan
    header: str
    kind: str = "text"
    image: ImageAsset | None = None

    @property
    def embedding_input(self) -> str:
        prefix = "Image: " if self.kind == "image" else ""
        return f"{prefix}{self.header}\n{self.span.text}" if self.header else f"{prefix}{self.span.text}"

    @property
    def image_extension(self) -> str:
        return IMAGE_EXTENSIONS.get(self.image.mime_type, "bin") if self.image else ""


def header_text(title: str, section_path: str, document: str = "") -> str:
    """The context every chunk is indexed and embedded under: the document (its identity line,
    else its title) and the section path, without repeating a title that is also the first heading."""
    section = section_path
    if title and section_path:
        section = "" if section_path == title else section_path.removeprefix(f"{title}{SECTION_SEPARATOR}")
    return SECTION_SEPARATOR.join(part for part in (document or title, section) if part)


def plan_chunks(
    parsed: ParsedDocument,
    *,
    max_tokens: int,
    overlap_tokens: int,
    count_tokens: Callable[[str], int],
    locate_tokens: TokenLocator | None = None,
    section_tokens: int = 0,
    document: str = "",
) -> list[PlannedChunk]:
    """The document's chunks; `locate_tokens`, when given, lets the chunker tokenize each text once.

    A section of at most `section_tokens` tokens is one chunk (0: sections are packed like the rest).
    `document` is the document's identity line, which heads every chunk's context (its title when
    empty).
    """
    spans: list[ChunkSpan] = []
    chunk = functools.partial(
        chunk_text,
        max_tokens=max_tokens,
        overlap_tokens=overlap_tokens,
        section_tokens=section_tokens,
        count_tokens=count_tokens,
        markdown=parsed.markdown,
        locate_tokens=locate_tokens,
    )
    if parsed.item_type != "image" or parsed.boxes:  # a standalone image without OCR text: its caption
        by_section = parsed.headings or parsed.boxes
        spans = _chunk_by_section(parsed, chunk) if by_section else chunk(parsed.text)
        if parsed.page_starts and not parsed.boxes:
            spans = assign_pages(spans, parsed.page_starts)
    planned = [
        PlannedChunk(span=span, header=header_text(parsed.title, span.section_path, document))
        for span in spans
    ]
    planned.extend(_image_chunk(parsed, image, spans, count_tokens, document) for image in parsed.images)
    return planned


def _chunk_by_section(parsed: ParsedDocument, chunk: Callable[..., list[ChunkSpan]]) -> list[ChunkSpan]:
    """Chunks that never cross a section start (the PDF's outline, or its headings), but do cross
    pages: a paragraph running over a page break stays in one chunk, citing both pages. A section
    holding only its heading joins the section after it."""
    sections, end = _contentful(parsed.headings, section_starts(parsed.headings), parsed.text)
    bounds_at = sorted({0, end} | {offset for offset, _ in sections if 0 < offset < end})
    offsets = [offset for offset, _ in sections]
    where = located(parsed.boxes)
    spans: list[ChunkSpan] = []
    for start, end in itertools.pairwise(bounds_at):
        at = bisect.bisect_right(offsets, start) - 1
        path = sections[at][1] if at >= 0 else ""
        for span in chunk(parsed.text[start:end], headed=bool(path)):
            span = replace(
                span,
                char_start=span.char_start + start,
                char_end=span.char_end + start,
                section_path=path or span.section_path,
            )
            spans.append(where(span) if parsed.boxes else span)
    return spans


def _contentful(
    headings: Sequence[Heading], sections: list[tuple[int, str]], text: str
) -> tuple[list[tuple[int, str]], int]:
    """The sections, a section holding only its printed heading given over to the one after it,
    and where the text worth chunking ends: headings with nothing after them at the very end (an
    index whose entries were page-number lists) are left out."""
    kept: list[tuple[int, str]] = []
    carried: int | None = None
    for index, (heading, (offset, path)) in enumerate(zip(headings, sections, strict=True)):
        end = sections[index + 1][0] if index + 1 < len(sections) else len(text)
        if heading.end > offset and not text[heading.end : end].strip():
            carried = offset if carried is None else carried
            continue
        kept.append((offset if carried is None else carried, path))
        carried = None
    return kept, len(text) if carried is None else carried


def section_starts(headings: Sequence[Heading]) -> list[tuple[int, str]]:
    """(offset, section path) where each heading's section starts, the path nesting by level."""
    stack: list[Heading] = []
    starts = []
    for heading in headings:
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        starts.append((heading.offset, SECTION_SEPARATOR.join(entry.title for entry in stack)))
    return starts


def _image_chunk(
    parsed: ParsedDocument,
    image: ImageAsset,
    spans: Sequence[ChunkSpan],
    count_tokens: Callable[[str], int],
    document: str,
) -> PlannedChunk:
    offset = min(max(image.char_offset, 0), len(parsed.text))
    context = parsed.text[
        max(0, offset - IMAGE_CONTEXT_CHARS // 2) : offset + IMAGE_CONTEXT_CHARS // 2
    ].strip()
    caption = image.caption.strip() or parsed.title
    text = caption if not context or context == caption else f"{caption}\n\n{' '.join(context.split())}"
    starts = [span.char_start for span in spans]
    covering = spans[bisect.bisect_right(starts, offset) - 1] if spans and starts[0] <= offset else None
    section = covering.section_path if covering else ""
    span = ChunkSpan(
        text=text,
        char_start=offset,
        char_end=offset,
        section_path=section,
        token_count=count_tokens(text),
        page=image.page,
    )
    header = header_text(parsed.title, section, document)
    return PlannedChunk(span=span, header=header, kind="image", image=image)


def with_document(chunks: Sequence[PlannedChunk], title: str, document: str) -> list[PlannedChunk]:
    """The chunks under another identity line (a person's corrections, known once the item is)."""
    return [replace(chunk, header=header_text(title, chunk.span.section_path, document)) for chunk in chunks]


def page_texts(parsed: ParsedDocument, line: str) -> list[tuple[int, str]]:
    """A paged document's pages, each its text under the document's identity line."""
    starts = parsed.page_starts
    if len(starts) < 2 and not parsed.boxes:
        return []
    ends = [*starts[1:], len(parsed.text)]
    pages = []
    for number, (start, end) in enumerate(zip(starts, ends, strict=True), start=1):
        text = parsed.text[start:end].strip()
        if text:
            pages.append((number, f"{line}\n{text}"))
    return pages
