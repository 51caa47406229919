"""What the real-document parts of a benchmark run measured: the manuals, the filings, OCR, the
PDF extractors, the formats' samples, a synced directory (pure: no Django, no model)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class ManualStats:
    """One manual's text chunks, inspected for what goes wrong in PDFs."""

    name: str
    pages: int
    bookmarks: bool
    chunks: int = 0
    under_50_chars: int = 0
    with_ligature: int = 0
    run_together: int = 0
    without_section: int = 0


@dataclass
class StageTimes:
    """Seconds for all the manuals at each stage of ingest (medians of rounds), side by side."""

    parse: float
    chunk: float
    embed: float
    chunks: int

    @property
    def layout_share(self) -> float:
        """Reading and laying out the PDFs, as a share of the time the embedding takes."""
        return self.parse / self.embed if self.embed else math.nan


@dataclass
class DocumentsResult:
    """The manuals ingested, their chunks inspected, the questions asked."""

    commit: str
    manuals: list[ManualStats] = field(default_factory=list)
    questions: int = 0
    found_at_3: int = 0
    misses: list[str] = field(default_factory=list)
    ingest_seconds: float = 0.0
    ingest_chunks: int = 0
    stages: StageTimes | None = None

    @property
    def success_at_3(self) -> float:
        return self.found_at_3 / self.questions if self.questions else 0.0

    @property
    def pages(self) -> int:
        return sum(manual.pages for manual in self.manuals)


@dataclass
class FilingsResult:
    """Long documents with tables (../shared/data/filings) asked over MCP: success by question group."""

    commit: str
    documents: int
    questions: int
    ingest_seconds: float
    chunks: int
    # group → {"questions": n, "success@1": …, "success@3": …, "success@5": …}
    table: dict[str, dict[str, float]]
    latency_p50_ms: float
    latency_p95_ms: float
    misses: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class OcrRun:
    """OCR of scanned manual pages at one resolution."""

    dpi: int
    pages: int
    word_accuracy: float
    worst_page: float
    median_page: float
    pages_per_second: float
    # Before OCR's run-together words were split again (ingestion/word_splitting.py), and the
    # share of the words read that are several words run together, after and before.
    word_accuracy_unsplit: float = math.nan
    run_together: float = math.nan
    run_together_unsplit: float = math.nan


@dataclass(frozen=True)
class FormatAnswer:
    """One real sample of a format: a question about it, and the chunk search answers with."""

    filename: str
    item_type: str
    question: str
    rank: int | None
    section: str
    chunk_uid: str
    preview: str


@dataclass(frozen=True)
class SyncResult:
    """A directory source: the first sync (the full ingest), a sync after 1 % changed, the watch."""

    files: int
    chunks: int
    full_seconds: float
    changed: int
    incremental_seconds: float
    incremental_updated: int
    noop_seconds: float
    watch_p50_seconds: float
    watch_max_seconds: float
    watch_edits: int


@dataclass(frozen=True)
class ExtractorRun:
    """One PDF library's plain text extraction of one manual."""

    library: str
    manual: str
    pages: int
    seconds: float
    run_together: int
    ligatures: int
