"""The million part's section of the report: targets, latencies, recall by index and ef_search, sizes."""

from __future__ import annotations

import math
from statistics import median

from benchmarks.cells import mib, number, verdict
from benchmarks.results import (
    MILLION_RECALL_TARGET,
    SEARCH_P50_TARGET_MS,
    SEARCH_P95_TARGET_MS,
    STAGE_LABELS,
    MillionResult,
)


def section(million: MillionResult) -> list[str]:
    size, build = million.size, million.size.build
    p50, p95, recall = size.p50("mcp"), size.p95("mcp"), million.recall
    lowest = min(million.recalls, default=math.nan)
    bm25_p50, bm25_p95 = size.p50("fulltext_leg"), size.p95("fulltext_leg")
    m, ef_construction = million.near_copies
    first_m = million.first_build[0]
    lines = [
        f"### A million chunks ({size.chunks:,} chunks, {size.queries} SciFact train queries after "
        "warm-up, one client)",
        "",
        f"Searched on the index rebuilt for near-copies (m {m}, ef_construction {ef_construction}, "
        + (
            f"{number(million.rebuild_seconds)} s with `rebuild_vector_index`'s function"
            if million.rebuild_seconds
            else "already so built in the kept data directory"
        )
        + f") with hnsw.ef_search {million.near_copies_ef_search}.",
        "",
        f"Targets: MCP p50 {number(p50)} ms (≤ {SEARCH_P50_TARGET_MS:.0f}: "
        f"{verdict(p50 <= SEARCH_P50_TARGET_MS)}), p95 {number(p95)} ms (≤ {SEARCH_P95_TARGET_MS:.0f}: "
        f"{verdict(p95 <= SEARCH_P95_TARGET_MS)}); HNSW recall@{million.recall_k} against an exact scan "
        f"{number(recall, 3)} over {len(million.recalls)} queries (≥ {MILLION_RECALL_TARGET}: "
        f"{verdict(recall >= MILLION_RECALL_TARGET)}, lowest query {number(lowest, 2)}; the 20th hit's "
        f"cosine distance over the exact 20th's: median {number(median(million.distance_ratios), 3)}, "
        f"worst {number(max(million.distance_ratios, default=math.nan), 3)}); "
        f"full-text leg (BM25) p50 {number(bm25_p50)} ms, p95 {number(bm25_p95)} ms.",
        "",
        "| stage | p50 ms | p95 ms |",
        "|---|---|---|",
        *(
            f"| {label} | {number(size.p50(stage))} | {number(size.p95(stage))} |"
            for stage, label in STAGE_LABELS.items()
        ),
        "",
        *_recall_table(million),
        f"Built from {build.real_chunks:,} real chunks and {build.copied_chunks:,} perturbed copies: rows by "
        f"COPY {number(build.rows_seconds)} s, tsvectors + postings {number(build.search_index_seconds)} s, "
        f"graph {number(build.graph_seconds)} s, chunk store {number(build.store_seconds)} s, indexes built "
        f"after loading {number(sum(build.index_seconds.values()))} s (maintenance_work_mem "
        f"{million.index_build_memory}), VACUUM ANALYZE {number(build.vacuum_seconds)} s.",
        "",
        "| table or index | size | built after loading in |",
        "|---|---|---|",
    ]
    for name, size_bytes in sorted(million.relation_bytes.items(), key=lambda item: -item[1]):
        built = build.index_seconds.get(name)
        when = "—" if built is None else number(built) + " s"
        if name.startswith("chunk_embedding_hnsw_") and million.rebuild_seconds:
            # The size is the rebuilt graph's; the time after loading was the first graph's.
            when = f"{when} (m {first_m}), rebuilt (m {m}) in {number(million.rebuild_seconds)} s"
        lines.append(f"| {name} | {mib(size_bytes)} | {when} |")
    lines += [
        f"| whole database | {mib(million.database_bytes)} | — |",
        "",
        f"PostgreSQL shared_buffers during the run: {million.shared_buffers}.",
        "",
    ]
    return lines


def _recall_table(million: MillionResult) -> list[str]:
    """Recall and the vector leg's time by hnsw.ef_search, on the index as first built and rebuilt."""
    first_m, first_ef_construction = million.first_build
    m, ef_construction = million.near_copies
    columns = [
        (f"m {first_m}, ef_construction {first_ef_construction}", million.first_ef_search),
        (f"m {m}, ef_construction {ef_construction}", million.ef_search),
    ]
    columns = [(label, values) for label, values in columns if values]
    tried = sorted({ef_search for _, values in columns for ef_search in values})
    header = " | ".join(f"{label}: recall@{million.recall_k} | vector leg, mean ms" for label, _ in columns)
    lines = [f"| hnsw.ef_search | {header} |", "|---|" + "---|---|" * len(columns)]
    for ef_search in tried:
        cells = []
        for _, values in columns:
            recall_at, leg_ms = values.get(ef_search, (math.nan, math.nan))
            cells += [number(recall_at, 3), number(leg_ms)]
        lines.append(f"| {ef_search} | " + " | ".join(cells) + " |")
    return [*lines, ""]
