"""From a parsed document to the chunks to store: text chunks with pages, and image chunks.

Pure: no database, no model. An image chunk's text is its caption plus the text around the
image, which is what makes it searchable; the image bytes go to the ChunkStore beside it.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from mnemosyne.ingestion.chunking import ChunkSpan, TokenLocator, assign_pages, chunk_text
from mnemosyne.ingestion.documents import Heading, ImageAsset, ParsedDocument
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


def header_text(title: str, section_path: str) -> str:
    """Title and section path, without repeating a title that is also the first heading."""
    parts = [title] if title else []
    if section_path and section_path != title:
        parts.append(section_path.removeprefix(f"{title}{SECTION_SEPARATOR}") if title else section_path)
    return SECTION_SEPARATOR.join(parts)


def plan_chunks(
    parsed: ParsedDocument,
    *,
    max_tokens: int,
    overlap_tokens: int,
    count_tokens: Callable[[str], int],
    locate_tokens: TokenLocator | None = None,
) -> list[PlannedChunk]:
    """The document's chunks; `locate_tokens`, when given, lets the chunker tokenize each text once."""
    spans: list[ChunkSpan] = []
    if parsed.item_type != "image":  # a standalone image's text is only its caption
        if parsed.page_starts:
            spans = _chunk_by_page(
                parsed,
                max_tokens=max_tokens,
                overlap_tokens=overlap_tokens,
                count_tokens=count_tokens,
                locate_tokens=locate_tokens,
            )
        else:
            spans = chunk_text(
                parsed.text,
                max_tokens=max_tokens,
                overlap_tokens=overlap_tokens,
                count_tokens=count_tokens,
                markdown=parsed.markdown,
                locate_tokens=locate_tokens,
            )
    planned = [PlannedChunk(span=span, header=header_text(parsed.title, span.section_path)) for span in spans]
    planned.extend(_image_chunk(parsed, image, spans, count_tokens) for image in parsed.images)
    return planned


def _chunk_by_page(
    parsed: ParsedDocument,
    *,
    max_tokens: int,
    overlap_tokens: int,
    count_tokens: Callable[[str], int],
    locate_tokens: TokenLocator | None,
) -> list[ChunkSpan]:
    """Chunks never cross a page boundary or a section start (the PDF's outline), so every chunk
    cites exactly one page and one section."""
    spans: list[ChunkSpan] = []
    sections = section_starts(parsed.headings)
    bounds = sorted(
        {*parsed.page_starts, len(parsed.text)}
        | {offset for offset, _ in sections if 0 < offset < len(parsed.text)}
    )
    offsets = [offset for offset, _ in sections]
    for start, end in itertools.pairwise(bounds):
        at = bisect.bisect_right(offsets, start) - 1
        path = sections[at][1] if at >= 0 else ""
        for span in chunk_text(
            parsed.text[start:end],
            max_tokens=max_tokens,
            overlap_tokens=overlap_tokens,
            count_tokens=count_tokens,
            markdown=parsed.markdown,
            locate_tokens=locate_tokens,
        ):
            spans.append(
                replace(
                    span,
                    char_start=span.char_start + start,
                    char_end=span.char_end + start,
                    section_path=path or span.section_path,
                )
            )
    return assign_pages(spans, parsed.page_starts)


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
    parsed: ParsedDocument, image: ImageAsset, spans: Sequence[ChunkSpan], count_tokens: Callable[[str], int]
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
    return PlannedChunk(span=span, header=header_text(parsed.title, section), kind="image", image=image)
