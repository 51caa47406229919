"""Prometheus metrics of the engine itself: search and its legs, embedding, ingestion, background
tasks and dependency failures (the MCP surface's own are in mcp_server/metrics.py).

With several server processes each keeps its own counters; `PROMETHEUS_MULTIPROC_DIR` (set by
`serve` when it runs more than one worker) makes /metrics add them up (`registry()`).
"""

from __future__ import annotations

import os

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram
from prometheus_client.multiprocess import MultiProcessCollector

_FAST = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
_SLOW = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)

SEARCH_SECONDS = Histogram("mnemosyne_search_seconds", "Time one search takes in the service.", buckets=_FAST)
LEG_SECONDS = Histogram(
    "mnemosyne_search_leg_seconds",
    "Time each search leg takes (vector, fulltext, graph).",
    ["leg"],
    buckets=_FAST,
)
LEG_FAILURES = Counter("mnemosyne_search_leg_failures", "Search legs that failed, by leg.", ["leg"])
EMBEDDING_SECONDS = Histogram(
    "mnemosyne_embedding_seconds",
    "Time spent embedding, by kind: query (one search's text) or documents (a batch of chunks).",
    ["kind"],
    buckets=_SLOW,
)
EMBEDDING_WAIT_SECONDS = Histogram(
    "mnemosyne_embedding_wait_seconds",
    "Time a batch of chunks waits for the model (another batch is being embedded), by kind.",
    ["kind"],
    buckets=_SLOW,
)
QUERY_BATCH_SIZE = Histogram(
    "mnemosyne_query_batch_size",
    "Queries embedded in one forward pass (those that arrived while the previous pass ran).",
    buckets=(1, 2, 3, 4, 6, 8, 12, 16, 24, 32),
)
EMBEDDED_TEXTS = Counter("mnemosyne_embedded_texts", "Texts embedded, by kind (query, documents).", ["kind"])
INGESTED_ITEMS = Counter(
    "mnemosyne_ingested_items",
    "Items ingested, by outcome (created, updated, unchanged, failed).",
    ["outcome"],
)
INGESTED_CHUNKS = Counter("mnemosyne_ingested_chunks", "Chunks written by ingestion.")
BACKGROUND_TASKS = Counter(
    "mnemosyne_background_tasks",
    "Background tasks run by the workers, by task and outcome (ok, failed).",
    ["task", "outcome"],
)
BACKGROUND_TASK_SECONDS = Histogram(
    "mnemosyne_background_task_seconds", "Time a background task takes, by task.", ["task"], buckets=_SLOW
)
DEPENDENCY_FAILURES = Counter(
    "mnemosyne_dependency_failures",
    "Calls that failed because a dependency was unavailable (database, chunk_store, graph, reranker, "
    "embedder).",
    ["dependency"],
)


def registry() -> CollectorRegistry:
    """What /metrics serves: this process's metrics, or every worker's added up in multiprocess mode."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return REGISTRY
    collected = CollectorRegistry()
    MultiProcessCollector(collected)
    return collected
