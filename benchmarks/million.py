"""A million chunks: the index grown by bulk load (rows by COPY, indexes built after), then the HNSW
leg's recall against an exact scan on the index as the project builds it; then the index rebuilt
as docs/operations.md advises for a corpus of many near-copies (NEAR_COPIES, with
`rebuild_vector_index`'s own function) and searched with NEAR_COPIES_EF_SEARCH: single-client
latencies per stage (as the search benchmark measures them), recall again, and the sizes of the
tables and indexes.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from django.test import override_settings

from benchmarks import database, ingest, scale, search
from benchmarks.results import BuildTimes, MillionResult
from mnemosyne.embedding import Embedder
from mnemosyne.library import vector_indexes, vector_models
from mnemosyne.library.models import Chunk
from mnemosyne.search import legs

CHUNKS = 1_000_000
RECALL_K = 20
RECALL_QUERIES = 100
# hnsw.ef_search values whose recall and vector-leg latency are reported beside the setting's.
EF_SEARCH_TRIED = (40, 100, 200, 400, 1000)
# This index's ≈ 200 near-copies of each chunk: the denser graph and the wider search that reach
# recall@20 ≥ 0.95 on it (m 16 / ef_construction 64 gives 0.41 to 0.48; docs/benchmarks.md).
NEAR_COPIES = vector_indexes.BuildParameters(m=64, ef_construction=400)
NEAR_COPIES_EF_SEARCH = 1000
# The tables whose sizes are reported (each with its indexes).
SIZED_TABLES = (
    "library_chunk",
    "library_posting",
    "library_term",
    "graph_mention",
    "graph_edge",
    "graph_concept",
)

Log = Callable[[str], None]


def run(
    *, queries: list[str], measured: int, warmup: int, corpus_10x: Path, embedder: Embedder, log: Log
) -> MillionResult:
    real = ingest.real_collection(corpus_10x, log)
    log(f"growing the index to {CHUNKS:,} chunks (rows by COPY, indexes built after)")
    build = scale.grow_to(CHUNKS, real=real, seed=CHUNKS, log=log, bulk=True) or BuildTimes(
        real_chunks=Chunk.objects.filter(collection=real).count(), copied_chunks=0
    )
    chunks = Chunk.objects.count()
    log(f"HNSW recall@{RECALL_K} against an exact scan, {RECALL_QUERIES} queries")
    vectors = [embedder.embed_query(query) for query in queries[:RECALL_QUERIES]]
    exact = exact_neighbours(vectors, RECALL_K)
    # The project's m 16 / ef_construction 64, unless a kept data directory's index was rebuilt.
    first = vector_indexes.parameters(embedder.dim) or vector_indexes.BuildParameters(0, 0)
    log(f"on the index as built (m {first.m}, ef_construction {first.ef_construction})")
    first_ef_search = _recall_by_ef_search(vectors, exact, log)
    log(f"rebuilding it with m {NEAR_COPIES.m}, ef_construction {NEAR_COPIES.ef_construction}")
    started = time.perf_counter()
    rebuilt = vector_indexes.rebuild(
        embedder.dim,
        NEAR_COPIES,
        memory=database.INDEX_BUILD_MEMORY,
        on_progress=lambda line: log(f"  {line}"),
    )
    # 0 when a kept data directory's index already had these parameters (nothing was built).
    rebuild_seconds = time.perf_counter() - started if rebuilt else 0.0
    log(f"rebuilt in {rebuild_seconds:.0f} s" if rebuilt else "already built with these parameters")
    # A server that has run a while has its hot pages in memory; right after the build (and on this
    # machine, whose kernel reclaims idle page cache) they are on disk: what a search reads is the
    # postings' two indexes (the full-text leg never reads their heap), the chunk rows and the HNSW
    # index. In this order, so that when shared_buffers cannot hold them all the HNSW index, read
    # last, stays whole.
    prewarmed = (
        "posting_by_term_impact",
        "posting_by_chunk_term",
        "library_chunk",
        vector_models.index_name(embedder.dim),
    )
    log(f"reading {', '.join(prewarmed)} into shared buffers (pg_prewarm)")
    database.prewarm(prewarmed)
    ordered = queries[measured : measured + warmup] + queries[:measured]
    ef_search = {
        "TUNING": ",".join(
            filter(None, [os.environ.get("TUNING", ""), f"hnsw_ef_search={NEAR_COPIES_EF_SEARCH}"])
        )
    }
    log(f"{chunks:,} chunks: timing {measured} queries single-client, every stage, {ef_search}")
    with (
        override_settings(SEARCH_HNSW_EF_SEARCH=NEAR_COPIES_EF_SEARCH),
        search.mcp_server(settings.MNEMOSYNE_DATA_DIR / "uvicorn-million.log", env=ef_search) as base,
    ):
        mcp = search.MCPSearch(base)
        try:
            size = search.measure(
                ordered, warmup=warmup, chunks=chunks, build=build, embedder=embedder, mcp=mcp, log=log
            )
        finally:
            mcp.close()
        per_query = recalls(vectors, exact, RECALL_K)
    log(
        f"{chunks:,} chunks: MCP p50 {size.p50('mcp'):.1f} ms, p95 {size.p95('mcp'):.1f} ms; "
        f"BM25 leg p95 {size.p95('fulltext_leg'):.1f} ms"
    )
    result = MillionResult(
        size=size,
        recall_k=RECALL_K,
        first_build=(first.m, first.ef_construction),
        first_ef_search=first_ef_search,
        near_copies=(NEAR_COPIES.m, NEAR_COPIES.ef_construction),
        near_copies_ef_search=NEAR_COPIES_EF_SEARCH,
        rebuild_seconds=rebuild_seconds,
    )
    result.recalls = [share for share, _ in per_query]
    result.distance_ratios = [ratio for _, ratio in per_query]
    log(f"recall@{RECALL_K} {result.recall:.3f} (hnsw.ef_search {NEAR_COPIES_EF_SEARCH})")
    log(f"on the rebuilt index (m {NEAR_COPIES.m}, ef_construction {NEAR_COPIES.ef_construction})")
    result.ef_search = _recall_by_ef_search(vectors, exact, log)
    result.relation_bytes = database.relation_sizes(SIZED_TABLES)
    result.database_bytes = database.database_size()
    result.shared_buffers = str(database.server_versions()["PostgreSQL shared_buffers"])
    result.index_build_memory = database.INDEX_BUILD_MEMORY
    return result


def _recall_by_ef_search(
    vectors: Sequence[Sequence[float]], exact: Sequence[list[tuple[int, float]]], log: Log
) -> dict[int, tuple[float, float]]:
    """hnsw.ef_search → (mean recall, mean milliseconds of the vector leg), for EF_SEARCH_TRIED."""
    found = {}
    for ef_search in EF_SEARCH_TRIED:
        with override_settings(SEARCH_HNSW_EF_SEARCH=ef_search):
            started = time.perf_counter()
            shares = [share for share, _ in recalls(vectors, exact, RECALL_K)]
            leg_ms = (time.perf_counter() - started) * 1000 / len(vectors)
        found[ef_search] = (statistics.fmean(shares), leg_ms)
        log(f"  ef_search {ef_search}: recall@{RECALL_K} {statistics.fmean(shares):.3f}, {leg_ms:.1f} ms")
    return found


def exact_neighbours(vectors: Sequence[Sequence[float]], k: int) -> list[list[tuple[int, float]]]:
    """Each vector's k nearest chunks (id, similarity), nearest first, by the vector leg's own
    statement with index scans turned off (a sequential scan ranks every chunk)."""
    neighbours = []
    for vector in vectors:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_indexscan = off")
            neighbours.append(legs.vector_leg(vector, legs.Filters(), k))
    return neighbours


def recalls(
    vectors: Sequence[Sequence[float]], exact: Sequence[list[tuple[int, float]]], k: int
) -> list[tuple[float, float]]:
    """Per query, the vector leg run as search runs it against the exact neighbours: the share of
    the exact top k it returned, and the cosine distance of its k-th hit over the exact k-th's
    (1.0: as near as the exact ones, whichever they are)."""
    measured = []
    for vector, nearest in zip(vectors, exact, strict=True):
        approximate = legs.vector_leg(vector, legs.Filters(), k)
        share = len({chunk_id for chunk_id, _ in approximate} & {chunk_id for chunk_id, _ in nearest})
        ratio = (
            (1.0 - approximate[-1][1]) / max(1.0 - nearest[-1][1], 1e-9) if approximate and nearest else 1.0
        )
        measured.append((share / max(len(nearest), 1), ratio))
    return measured
