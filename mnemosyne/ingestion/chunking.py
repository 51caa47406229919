"""Token-bounded, structure-aware chunking that keeps each chunk's Markdown heading path.

Pure functions: no Django, no database. Offsets always index the normalised text.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from mnemosyne.ingestion import tables
from mnemosyne.ingestion.markdown_lines import MarkdownHeading, scan_lines, starts_fence
from mnemosyne.library.sections import SECTION_SEPARATOR

TokenCounter = Callable[[str], int]
# Where each of a text's tokens starts (character offsets, ascending).
TokenLocator = Callable[[str], Sequence[int]]
# Tokens in text[start:end].
_SpanCounter = Callable[[int, int], int]

# Ever finer places to split a unit that is too large, coarsest first. Each break swallows the
# whitespace around it, so the parts of a trimmed span come out trimmed.
_BLOCK_BREAK = re.compile(r"[^\S\n]*\n[^\S\n]*\n\s*")
_SENTENCE_BREAK = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+")
_LINE_BREAK = re.compile(r"\s*\n\s*")
_WORD_BREAK = re.compile(r"\s+")
_SPLIT_LEVELS = (_BLOCK_BREAK, _SENTENCE_BREAK, _LINE_BREAK, _WORD_BREAK)
# Overlap repeats whole sentences at the finest; a word fragment gives no useful context.
_OVERLAP_LEVELS = (_BLOCK_BREAK, _SENTENCE_BREAK)


@dataclass(frozen=True)
class ChunkSpan:
    text: str
    char_start: int
    char_end: int
    section_path: str
    token_count: int
    page: int | None = None
    # The last page it runs onto, when that is not its first.
    page_end: int | None = None
    # PDF: (page, x0, y0, x1, y1) boxes of its lines, in points from the page's bottom left.
    locations: tuple[tuple[int, float, float, float, float], ...] = ()
    # OCR'd text: the recogniser's mean confidence over its lines; None for a text layer.
    ocr_confidence: float | None = None


def chunk_text(
    text: str,
    *,
    max_tokens: int,
    overlap_tokens: int,
    count_tokens: TokenCounter,
    markdown: bool,
    locate_tokens: TokenLocator | None = None,
    section_tokens: int = 0,
    headed: bool = False,
) -> list[ChunkSpan]:
    """Chunks of at most `max_tokens` tokens, each opening with up to `overlap_tokens` of the last.

    A section (its heading and everything under it, up to the next heading) of at most
    `section_tokens` tokens is one chunk, so an explanation and its example stay together; text
    under no heading is packed at `max_tokens` (`headed`: the whole text is one section, its heading
    found by the caller). A section holding only its heading joins the section after it. A table is
    kept whole with its caption, or cut between rows with its header repeated (tables.py).

    With `locate_tokens` the text is tokenized once and any span is counted from the token
    offsets; otherwise every span measured is tokenized again with `count_tokens`. The two agree
    for tokenizers that never join characters across whitespace (WordPiece, as in BERT models),
    because every span the chunker measures starts and ends at whitespace.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    if overlap_tokens < 0:
        raise ValueError(f"overlap_tokens must not be negative, got {overlap_tokens}")
    count = _span_counter(text, count_tokens, locate_tokens)
    chunks: list[ChunkSpan] = []
    for section in _without_bare_headings(_sections(text, markdown=markdown)):
        paragraphs = _with_captions(
            text, [p for p in (_measure(text, s, e, count) for s, e in section.paragraphs) if p is not None]
        )
        if not paragraphs:
            continue
        whole = count(paragraphs[0].start, paragraphs[-1].end)
        if whole <= section_tokens and (headed or section.path):
            start, end = paragraphs[0].start, paragraphs[-1].end
            chunks.append(ChunkSpan(text[start:end], start, end, section.path, whole))
            continue
        chunks.extend(_chunk_section(text, section, paragraphs, max_tokens, overlap_tokens, count))
    return chunks


def _chunk_section(
    text: str,
    section: _Section,
    paragraphs: list[_Span],
    max_tokens: int,
    overlap_tokens: int,
    count: _SpanCounter,
) -> list[ChunkSpan]:
    """A section's chunks: its paragraphs packed, a table too large for one chunk cut by rows."""
    runs: list[list[_Span] | tuple[_Span, int]] = [[]]
    for paragraph in paragraphs:
        header = tables.header_end(text, paragraph.start, paragraph.end)
        if header is not None and paragraph.tokens > max_tokens:
            runs += [(paragraph, header), []]
        else:
            last = runs[-1]
            assert isinstance(last, list)
            last.extend(_refine(text, paragraph, _SPLIT_LEVELS, max_tokens, count))
    chunks: list[ChunkSpan] = []
    for position, run in enumerate(runs):
        if isinstance(run, tuple):
            table, header = run
            parts = tables.split_rows(text, table.start, table.end, header, max_tokens, count)
            chunks += [
                ChunkSpan(p.text, p.char_start, p.char_end, section.path, p.token_count) for p in parts
            ]
            continue
        packed = _pack(
            text,
            run,
            starts_with_heading=section.starts_with_heading and position == 0,
            max_tokens=max_tokens,
            overlap_tokens=overlap_tokens,
            count=count,
        )
        chunks += [ChunkSpan(text[s:e], s, e, section.path, tokens) for s, e, tokens in packed]
    return chunks


def _without_bare_headings(sections: list[_Section]) -> list[_Section]:
    """A section holding nothing but its heading gives its heading to the section after it."""
    kept: list[_Section] = []
    carried: list[tuple[int, int]] = []
    for index, section in enumerate(sections):
        bare = section.starts_with_heading and len(section.paragraphs) == 1
        if bare and index + 1 < len(sections):
            carried.extend(section.paragraphs)
            continue
        if carried:
            section = _Section(section.path, section.starts_with_heading, [*carried, *section.paragraphs])
            carried = []
        kept.append(section)
    return kept


def _with_captions(text: str, paragraphs: list[_Span]) -> list[_Span]:
    """A table's caption just before it becomes one paragraph with it."""
    joined: list[_Span] = []
    for paragraph in paragraphs:
        previous = joined[-1] if joined else None
        if (
            previous is not None
            and tables.is_caption(text, previous.start, previous.end)
            and tables.header_end(text, paragraph.start, paragraph.end) is not None
        ):
            joined[-1] = _Span(previous.start, paragraph.end, previous.tokens + paragraph.tokens)
        else:
            joined.append(paragraph)
    return joined


def assign_pages(spans: list[ChunkSpan], page_starts: Sequence[int]) -> list[ChunkSpan]:
    """The spans with `page` set to the 1-based page their first character is on.

    A chunk may run onto the next page; it is found on the page where it starts. `page_starts`
    holds the offset where each page starts (ascending); without pages the spans are unchanged.
    """
    if not page_starts:
        return list(spans)
    return [replace(span, page=max(1, bisect_right(page_starts, span.char_start))) for span in spans]


class _Span(NamedTuple):
    start: int
    end: int
    tokens: int


@dataclass
class _Section:
    path: str
    starts_with_heading: bool
    paragraphs: list[tuple[int, int]] = field(default_factory=list)


def _sections(text: str, *, markdown: bool) -> list[_Section]:
    sections = [_Section(path="", starts_with_heading=False)]
    stack: list[MarkdownHeading] = []
    paragraph: list[int] = []  # [start, end] of the paragraph being read, empty between paragraphs

    def close_paragraph() -> None:
        if paragraph:
            sections[-1].paragraphs.append((paragraph[0], paragraph[1]))
            paragraph.clear()

    for line in scan_lines(text, markdown=markdown):
        if line.heading is not None:
            close_paragraph()
            while stack and stack[-1].level >= line.heading.level:
                stack.pop()
            stack.append(line.heading)
            path = SECTION_SEPARATOR.join(h.title for h in stack)
            sections.append(_Section(path, starts_with_heading=True, paragraphs=[(line.start, line.end)]))
        elif line.blank:
            close_paragraph()
        elif paragraph:
            paragraph[1] = line.end
        else:
            paragraph.extend((line.start, line.end))
    close_paragraph()
    return sections


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _span_counter(text: str, count_tokens: TokenCounter, locate_tokens: TokenLocator | None) -> _SpanCounter:
    if locate_tokens is None:
        return lambda start, end: count_tokens(text[start:end])
    starts = locate_tokens(text)
    return lambda start, end: bisect_left(starts, end) - bisect_left(starts, start)


def _measure(text: str, start: int, end: int, count: _SpanCounter) -> _Span | None:
    start, end = _trim(text, start, end)
    if start == end:
        return None
    return _Span(start, end, count(start, end))


def _split(text: str, span: _Span, breaks: re.Pattern[str]) -> list[tuple[int, int]]:
    parts: list[tuple[int, int]] = []
    cursor = span.start
    for match in breaks.finditer(text, span.start, span.end):
        parts.append((cursor, match.start()))
        cursor = match.end()
    parts.append((cursor, span.end))
    return [(s, e) for s, e in parts if s < e]


def _refine(
    text: str, span: _Span, levels: Sequence[re.Pattern[str]], limit: int, count: _SpanCounter
) -> list[_Span]:
    """Split `span` at the coarsest level that works until each part fits `limit` or is one word."""
    if span.tokens <= limit or not levels:
        return [span]
    parts = _split(text, span, levels[0])
    if len(parts) <= 1:
        return _refine(text, span, levels[1:], limit, count)
    refined: list[_Span] = []
    finer = levels[1:]
    for start, end in parts:
        part = _Span(start, end, count(start, end))
        if part.tokens <= limit or not finer:
            refined.append(part)
        else:
            refined.extend(_refine(text, part, finer, limit, count))
    return refined


def _pack(
    text: str,
    pieces: list[_Span],
    *,
    starts_with_heading: bool,
    max_tokens: int,
    overlap_tokens: int,
    count: _SpanCounter,
) -> list[tuple[int, int, int]]:
    """Greedily pack pieces into (start, end, token_count) chunks, each opening with the overlap."""
    chunks: list[tuple[int, int, int]] = []
    carry: _Span | None = None  # trailing text of the previous chunk to repeat
    first = 0
    while first < len(pieces):
        if first == 0 and starts_with_heading and len(pieces) > 1:
            _glue_heading(text, pieces, max_tokens, count)
        used = (carry.tokens if carry else 0) + pieces[first].tokens
        after = first + 1
        while after < len(pieces) and used + pieces[after].tokens <= max_tokens:
            used += pieces[after].tokens
            after += 1
        # Token counts are only roughly additive, so check the joined text and shrink if needed.
        while True:
            start = carry.start if carry else pieces[first].start
            tokens = count(start, pieces[after - 1].end)
            if tokens <= max_tokens:
                break
            if after - first > 1:
                after -= 1
            elif carry is not None:
                carry = None
            else:
                break  # a single unsplittable word
        chunks.append((start, pieces[after - 1].end, tokens))
        carry = None
        if after < len(pieces) and overlap_tokens > 0:
            budget = min(overlap_tokens, max_tokens - pieces[after].tokens)
            carry = _overlap(text, pieces[first:after], budget, count)
        first = after
    return chunks


def _glue_heading(text: str, pieces: list[_Span], max_tokens: int, count: _SpanCounter) -> None:
    """Split the first paragraph so its opening sentences share a chunk with the heading line.

    A heading alone makes a poor chunk; a fenced code block is left whole as it fits on its own.
    """
    room = max_tokens - pieces[0].tokens
    if room <= 0 or pieces[0].tokens + pieces[1].tokens <= max_tokens:
        return
    if not starts_fence(text, pieces[1].start):
        pieces[1:2] = _refine(text, pieces[1], (_SENTENCE_BREAK,), room, count)


def _overlap(text: str, previous: list[_Span], budget: int, count: _SpanCounter) -> _Span | None:
    """The trailing pieces (or sentences) of the previous chunk totalling at most `budget` tokens."""
    if budget <= 0:
        return None
    start: int | None = None
    tokens = 0
    for piece in reversed(previous):
        if tokens + piece.tokens <= budget:
            start, tokens = piece.start, tokens + piece.tokens
            continue
        for part in reversed(_refine(text, piece, _OVERLAP_LEVELS, budget - tokens, count)):
            if tokens + part.tokens > budget:
                break
            start, tokens = part.start, tokens + part.tokens
        break
    if start is None:
        return None
    return _Span(start, previous[-1].end, tokens)
