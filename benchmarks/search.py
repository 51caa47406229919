"""Search latency per stage: query embedding, each leg, the SearchService, and MCP over HTTP.

The stages run interleaved per query (the service and the two MCP calls rotate which goes first), so
the machine's noise falls on all of them alike; warm-up queries run first and are not counted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from django.conf import settings

from benchmarks import database, ingest, processes, scale
from benchmarks.mcp_sessions import sse_payload
from benchmarks.results import STAGES, BuildTimes, SearchSize
from mnemosyne.embedding import Embedder
from mnemosyne.library.models import Chunk
from mnemosyne.search import legs, service
from mnemosyne.search.types import DEFAULT_LIMIT

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL_VERSION = "2025-11-25"
MCP_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": PROTOCOL_VERSION,
}
HEALTH_TIMEOUT_SECONDS = 300
END_TO_END = ("service", "mcp", "mcp_streamed")

Log = Callable[[str], None]


@contextmanager
def mcp_server(log_path: Path, *, workers: int = 1, env: dict[str, str] | None = None) -> Iterator[str]:
    """uvicorn serving mnemosyne.project.asgi:app against the benchmark database, without auth (unless `env`
    says otherwise); yields its URL. With several workers their metrics are added up."""
    port = processes.free_port()
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "mnemosyne.project.settings",
        "DATABASE_URL": database.database_url(),
        "MNEMOSYNE_DATA_DIR": str(settings.MNEMOSYNE_DATA_DIR),
        "MCP_REQUIRE_AUTH": "false",
        "LOG_LEVEL": "warning",
        **(env or {}),
    }
    command = [sys.executable, "-m", "uvicorn", "mnemosyne.project.asgi:app", "--host", "127.0.0.1"]
    if workers > 1:
        command += ["--workers", str(workers)]
        # One set of metrics for all workers, as `serve --workers N` arranges.
        shared = log_path.parent / f"prometheus-{log_path.stem}"
        shutil.rmtree(shared, ignore_errors=True)
        shared.mkdir(parents=True)
        environment["PROMETHEUS_MULTIPROC_DIR"] = str(shared)
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            [
                *command,
                "--port",
                str(port),
                "--no-access-log",
                # As `serve` runs it.
                "--timeout-keep-alive",
                str(settings.HTTP_KEEP_ALIVE_SECONDS),
            ],
            cwd=ROOT,
            env=environment,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + HEALTH_TIMEOUT_SECONDS
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"uvicorn exited:\n{log_path.read_text()[-4000:]}")
                try:
                    if httpx.get(f"{base}/mcp/health", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"uvicorn did not become healthy:\n{log_path.read_text()[-4000:]}")
                time.sleep(0.25)
            yield base
        finally:
            processes.stop(process)


class MCPSearch:
    """tools/call search over one keep-alive connection (stateless streamable HTTP).

    The server answers with one JSON body, or, when the request carries a progress token
    (`streamed`), with server-sent events; each call checks it got the answer it was timing.
    """

    def __init__(self, base: str) -> None:
        self._client = httpx.Client(base_url=base, headers=MCP_HEADERS, timeout=60)
        self._id = 0

    def __call__(self, query: str, limit: int, *, streamed: bool = False) -> int:
        self._id += 1
        params: dict[str, Any] = {"name": "search", "arguments": {"query": query, "limit": limit}}
        if streamed:
            params["_meta"] = {"progressToken": self._id}
        body = {"jsonrpc": "2.0", "id": self._id, "method": "tools/call", "params": params}
        response = self._client.post("/mcp/", content=json.dumps(body).encode())
        response.raise_for_status()
        expected = "text/event-stream" if streamed else "application/json"
        if not response.headers.get("content-type", "").startswith(expected):
            raise RuntimeError(f"expected a {expected} answer, got {response.headers.get('content-type')!r}")
        message = sse_payload(response)
        result = message.get("result")
        if not isinstance(result, dict) or result.get("isError"):
            raise RuntimeError(f"the MCP search failed: {json.dumps(message)[:500]}")
        return len(result.get("structuredContent", {}).get("results", []))

    def close(self) -> None:
        self._client.close()


def _elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def measure(
    queries: list[str],
    *,
    warmup: int,
    chunks: int,
    build: BuildTimes,
    embedder: Embedder,
    mcp: MCPSearch,
    log: Log,
) -> SearchSize:
    """Time every stage for each query; the first `warmup` queries are run but not recorded."""
    limit = DEFAULT_LIMIT
    candidates = max(limit, service.MIN_CANDIDATES)
    filters = legs.Filters()
    size = SearchSize(chunks=chunks, queries=len(queries) - warmup, build=build)
    size.latencies = {stage: [] for stage in STAGES}
    for number, query in enumerate(queries):
        timings: dict[str, float] = {}
        started = time.perf_counter()
        # The run keeps no query vectors (EMBEDDING_QUERY_CACHE_SIZE=0): every stage embeds again.
        vector = embedder.embed_query(query)
        timings["embed"] = _elapsed_ms(started)
        # Rotate which end-to-end call meets the query first (and its colder caches).
        for stage in END_TO_END[number % 3 :] + END_TO_END[: number % 3]:
            started = time.perf_counter()
            if stage == "service":
                service.search(service.SearchRequest(query=query, limit=limit), embedder=embedder)
            else:
                mcp(query, limit, streamed=stage == "mcp_streamed")
            timings[stage] = _elapsed_ms(started)
        started = time.perf_counter()
        legs.vector_leg(vector, filters, candidates)
        timings["vector_leg"] = _elapsed_ms(started)
        started = time.perf_counter()
        legs.fulltext_leg(query, filters, candidates)
        timings["fulltext_leg"] = _elapsed_ms(started)
        started = time.perf_counter()
        legs.graph_leg(query, filters, candidates)
        timings["graph_leg"] = _elapsed_ms(started)
        if number >= warmup:
            for stage in STAGES:
                size.latencies[stage].append(timings[stage])
        if (number + 1) % 50 == 0:
            log(f"  {number + 1} / {len(queries)} queries")
    return size


def run(
    *,
    sizes: tuple[int, ...],
    queries: list[str],
    measured: int,
    warmup: int,
    corpus_10x: Path,
    embedder: Embedder,
    log: Log,
) -> list[SearchSize]:
    """Per size: grow the index with copies, then time every stage for the same queries."""
    if len(queries) < measured + warmup:
        raise ValueError(f"{len(queries)} queries; the run needs {measured + warmup}")
    real = ingest.real_collection(corpus_10x, log)
    # Warm-up queries are others than the measured ones.
    ordered = queries[measured : measured + warmup] + queries[:measured]
    results = []
    log("starting uvicorn (loads the model before it answers health checks)")
    with mcp_server(settings.MNEMOSYNE_DATA_DIR / "uvicorn.log") as base:
        mcp = MCPSearch(base)
        try:
            for target in sizes:
                log(f"growing the index to {target:,} chunks")
                build = scale.grow_to(target, real=real, seed=target, log=log)
                chunks = Chunk.objects.count()
                if build is None:
                    log(f"the real chunks alone are {chunks:,}; no copies needed")
                    build = BuildTimes(real_chunks=chunks, copied_chunks=0)
                log(
                    f"{chunks:,} chunks: rows + HNSW {build.rows_seconds:.0f} s, "
                    f"tsvector + postings {build.search_index_seconds:.0f} s, "
                    f"graph {build.graph_seconds:.0f} s, "
                    f"store {build.store_seconds:.0f} s, VACUUM ANALYZE {build.vacuum_seconds:.0f} s"
                )
                size = measure(
                    ordered, warmup=warmup, chunks=chunks, build=build, embedder=embedder, mcp=mcp, log=log
                )
                log(
                    f"{chunks:,} chunks: MCP p50 {size.p50('mcp'):.1f} ms, p95 {size.p95('mcp'):.1f} ms; "
                    f"service p50 {size.p50('service'):.1f} ms; embedding p50 {size.p50('embed'):.1f} ms"
                )
                results.append(size)
        finally:
            mcp.close()
    return results
