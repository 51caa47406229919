"""What a benchmark run measured, and the numbers derived from it (pure: no Django, no model)."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchmarks.percentiles import median, percentile

if TYPE_CHECKING:
    from benchmarks.copies_results import CopiesResult
    from benchmarks.documents_results import (
        DocumentsResult,
        ExtractorRun,
        FilingsResult,
        FormatAnswer,
        OcrRun,
        SyncResult,
    )
    from benchmarks.load_results import LoadResult
    from benchmarks.peers_results import PeersResult

INGEST_RATIO_TARGET = 0.8
# Concept extraction runs on every chunk ingest writes: at least this many chunks a CPU second.
CONCEPT_RATE_TARGET = 200
# End to end against the same ingest with the documents embedded on torch (the encoder before int8).
INGEST_SPEEDUP_TARGET = 2.5
SEARCH_TARGET_CHUNKS = 100_000
SEARCH_P50_TARGET_MS = 40.0
SEARCH_P95_TARGET_MS = 80.0
MCP_OVERHEAD_TARGET = 0.25
MILLION_RECALL_TARGET = 0.95

# Stages timed per query, in report order.
STAGES = ("embed", "vector_leg", "fulltext_leg", "graph_leg", "service", "mcp", "mcp_streamed")
STAGE_LABELS = {
    "embed": "query embedding alone",
    "vector_leg": "vector leg (HNSW)",
    "fulltext_leg": "full-text leg (BM25)",
    "graph_leg": "graph leg",
    "service": "SearchService end to end",
    "mcp": "MCP over HTTP end to end (JSON answer)",
    "mcp_streamed": "MCP over HTTP, streamed answer (request with a progress token)",
}
MCP_STAGES = ("mcp", "mcp_streamed")


@dataclass(frozen=True)
class IngestRun:
    """One `manage.py ingest` child process."""

    documents: int
    chunks: int
    # The ingest command alone: no process start-up, Django set-up or model load.
    seconds: float
    # Of `seconds`, the time inside the model's embed_batch (measured in the same process).
    embedding_seconds: float
    startup_seconds: float
    rss_after_load_bytes: int
    peak_rss_bytes: int
    # RSS at 25, 50, 75 and 100 % of the ingest time: flat, or growing with the corpus?
    rss_quarters_bytes: tuple[int, ...] = ()

    @property
    def chunks_per_second(self) -> float:
        return self.chunks / self.seconds if self.seconds > 0 else math.nan

    @property
    def embedding_share(self) -> float:
        """End-to-end over raw throughput with raw measured inside the run: embedding time / ingest time."""
        return self.embedding_seconds / self.seconds if self.seconds > 0 else math.nan


@dataclass
class IngestResult:
    documents: int
    planned_chunks: int
    # Raw embedding throughput (chunks/s) and the 1x end-to-end runs, in the order they ran.
    raw_rates: list[float] = field(default_factory=list)
    runs_1x: list[IngestRun] = field(default_factory=list)
    # The same 1x ingest with the documents embedded on torch, each run right after one of runs_1x.
    torch_runs_1x: list[IngestRun] = field(default_factory=list)
    # Concept extraction alone (the graph's, run on every chunk ingest writes), chunks per CPU
    # second, measured beside each raw embedding run.
    concept_rates: list[float] = field(default_factory=list)
    # The 10x corpus runs twice; the last run stays as the search benchmark's real chunks.
    runs_10x: list[IngestRun] = field(default_factory=list)

    @property
    def raw_median(self) -> float:
        return median(self.raw_rates)

    @property
    def concept_median(self) -> float:
        return median(self.concept_rates) if self.concept_rates else math.nan

    @property
    def e2e_median(self) -> float:
        return median([run.chunks_per_second for run in self.runs_1x])

    @property
    def ratio(self) -> float:
        return self.e2e_median / self.raw_median

    @property
    def torch_median(self) -> float:
        if not self.torch_runs_1x:
            return math.nan
        return median([run.chunks_per_second for run in self.torch_runs_1x])

    @property
    def speedup(self) -> float:
        """End to end over end to end on torch (medians)."""
        return self.e2e_median / self.torch_median

    @property
    def embedding_share_median(self) -> float:
        return median([run.embedding_share for run in self.runs_1x])

    @property
    def peak_rss_1x(self) -> float:
        return median([run.peak_rss_bytes for run in self.runs_1x])

    @property
    def peak_rss_10x(self) -> float:
        return median([run.peak_rss_bytes for run in self.runs_10x]) if self.runs_10x else math.nan

    @property
    def rss_ratio(self) -> float:
        return self.peak_rss_10x / self.peak_rss_1x if self.runs_10x else math.nan


@dataclass(frozen=True)
class BuildTimes:
    """How one index size was reached from the real chunks (seconds per phase)."""

    real_chunks: int
    copied_chunks: int
    rows_seconds: float = 0.0  # items and chunks inserted (HNSW maintained as they go in, unless bulk)
    search_index_seconds: float = 0.0  # tsvectors and BM25 postings (write_search_vectors)
    graph_seconds: float = 0.0  # concept mentions through the GraphStore
    store_seconds: float = 0.0  # perturbed full text into the ChunkStore
    vacuum_seconds: float = 0.0  # VACUUM ANALYZE
    # A bulk build (rows by COPY): seconds to build each index after loading, by index name.
    index_seconds: dict[str, float] = field(default_factory=dict)


@dataclass
class SearchSize:
    chunks: int
    queries: int
    build: BuildTimes
    # Milliseconds per measured query, per stage (see STAGES); same query order in every list.
    latencies: dict[str, list[float]] = field(default_factory=dict)

    def p50(self, stage: str) -> float:
        return percentile(self.latencies.get(stage, []), 0.5)

    def p95(self, stage: str) -> float:
        return percentile(self.latencies.get(stage, []), 0.95)

    def overhead(self, stage: str) -> float:
        """(p50 of an MCP stage - service p50) / service p50."""
        return (self.p50(stage) - self.p50("service")) / self.p50("service")

    @property
    def mcp_overhead(self) -> float:
        """The overhead of the answer every client gets (the targets' figure)."""
        return self.overhead("mcp")

    @property
    def rest_p50(self) -> float:
        """Median per query of what the service spends besides its legs: fusion, hydration, shaping.

        The full-text leg runs beside the query embedding and the vector leg, so the legs take the
        longer of the two paths; the graph leg is not part of the default search.
        """
        latencies = self.latencies
        rests = [
            total - max(latencies["embed"][i] + latencies["vector_leg"][i], latencies["fulltext_leg"][i])
            for i, total in enumerate(latencies.get("service", []))
        ]
        return median(rests)

    def dominant_leg(self) -> str:
        legs = ("embed", "vector_leg", "fulltext_leg", "graph_leg")
        return max(legs, key=self.p50)


@dataclass(frozen=True)
class DiversityTiming:
    """MMR over one window of hits: the vectorised ordering and the pairwise one, medians in ms."""

    limit: int
    window: int
    vectorised_ms: float
    pairwise_ms: float
    same_order: bool


@dataclass(frozen=True)
class AccessTiming:
    """Deciding one request (identify the token, check the call) under one policy and load."""

    policy: str
    clients: int
    decisions: int
    median_us: float
    p95_us: float
    per_second: float
    queries: int


@dataclass(frozen=True)
class ConsoleTiming:
    """One console page (or step) timed over HTTP by a signed-in client, milliseconds."""

    name: str
    requests: int
    chunks: int
    items: int
    p50_ms: float
    p95_ms: float


@dataclass(frozen=True)
class Timing:
    """Requests (or calls) of one kind, timed: milliseconds."""

    name: str
    requests: int
    p50_ms: float
    p95_ms: float


@dataclass
class EvaluationBench:
    """The `evaluation` part: the playground against MCP search side by side, an evaluation run,
    the activity views over a million logged calls, and the query log's cost per call."""

    chunks: int
    run: dict[str, Any] = field(default_factory=dict)
    # "playground, the request", "MCP search, the request", "…, the search in the server".
    side_by_side: dict[str, Timing] = field(default_factory=dict)
    activity: list[Timing] = field(default_factory=list)
    # What a call waits for its row (query_log.record hands it to the writer), and what the writer
    # then spends a row writing them all.
    record_ms: Timing | None = None
    written_ms_per_row: float | None = None


@dataclass
class MillionResult:
    """The million-chunk index: single-client latencies, HNSW recall against an exact scan, sizes."""

    size: SearchSize
    recall_k: int
    # Per query: the share of the exact scan's k nearest chunks the HNSW leg returned.
    recalls: list[float] = field(default_factory=list)
    # Per query, the cosine distance of the HNSW leg's k-th hit over the exact k-th's.
    distance_ratios: list[float] = field(default_factory=list)
    # On the index rebuilt for near-copies: hnsw.ef_search tried → (mean recall, mean milliseconds
    # of the vector leg); `recalls` are at near_copies_ef_search.
    ef_search: dict[int, tuple[float, float]] = field(default_factory=dict)
    # The same on the index before the rebuild, as built with (m, ef_construction): the project's.
    first_build: tuple[int, int] = (0, 0)
    first_ef_search: dict[int, tuple[float, float]] = field(default_factory=dict)
    near_copies: tuple[int, int] = (0, 0)  # (m, ef_construction) of the rebuilt index
    near_copies_ef_search: int = 0
    rebuild_seconds: float = 0.0
    relation_bytes: dict[str, int] = field(default_factory=dict)
    database_bytes: int = 0
    shared_buffers: str = ""
    index_build_memory: str = ""

    @property
    def recall(self) -> float:
        return statistics.fmean(self.recalls) if self.recalls else math.nan


@dataclass
class BenchResult:
    mode: str
    started: str
    finished: str = ""
    machine: dict[str, str] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    ingest: IngestResult | None = None
    search: list[SearchSize] = field(default_factory=list)
    diversity: list[DiversityTiming] = field(default_factory=list)
    access: list[AccessTiming] = field(default_factory=list)
    console: list[ConsoleTiming] = field(default_factory=list)
    evaluation: EvaluationBench | None = None
    documents: DocumentsResult | None = None
    filings: FilingsResult | None = None
    ocr: list[OcrRun] = field(default_factory=list)
    extractors: list[ExtractorRun] = field(default_factory=list)
    load: LoadResult | None = None
    million: MillionResult | None = None
    copies: CopiesResult | None = None
    sync: SyncResult | None = None
    formats: list[FormatAnswer] = field(default_factory=list)
    peers: PeersResult | None = None
    notes: list[str] = field(default_factory=list)
