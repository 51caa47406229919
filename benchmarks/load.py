"""Load: many MCP clients at once over real HTTP against the 100k-chunk index.

1. The CPU one search costs, with a single client: the server's processes and PostgreSQL's, read
   from the kernel (psutil) before and after a run of sequential searches.
2. 50 concurrent clients for LOAD_SECONDS, with 1 and with 2 uvicorn workers, side by side:
   calls/s, p50/p95/p99, errors.
3. Mixed: 5 writers (upsert_item of SciFact abstracts) and 20 searchers at once, 2 workers; a
   write alone first, for comparison; afterwards every write that was answered as done is checked
   in the database (nothing lost).
4. The same as 2 with 1 worker and the queries on the int8 graph (EMBEDDING_QUERY_BACKEND=onnx-int8),
   after its single-client CPU as in 1.
5. An outage (benchmarks/outage.py): a server on a PostgreSQL of its own, 10 clients calling, the
   database stopped for OUTAGE_SECONDS and started again: answers per second while down, what they
   were, the time to the first normal answer after the restart, and the lines the server logged.
6. Overload: OVERLOAD_CLIENTS on 1 worker, more than it admits (MCP_MAX_CALLS, MCP_MAX_WAITING_CALLS),
   each with a connection of its own (benchmarks/mcp_sessions.py): calls/s and latencies of the
   calls answered, the calls shed (503 busy) and how fast each was told.

Clients are asyncio tasks sharing one httpx.AsyncClient per task group (in 6, one each), on the
same 2 cores as the server: the figures include what the load generator costs.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx
import psutil
from django.conf import settings

from benchmarks import ingest, mcp_sessions, outage, scale
from benchmarks.load_results import CpuPerSearch, LoadResult, LoadRun, MixedLoad
from benchmarks.search import MCP_HEADERS, mcp_server
from mnemosyne.library.models import Chunk, Collection, EmbeddingStatus, Item
from mnemosyne.library.services import ensure_collection

Log = Callable[[str], None]

CLIENTS = 50
CPU_CALLS = 200
MIXED_WRITERS = 5
MIXED_SEARCHERS = 20
# More than one worker admits by default (MCP_MAX_CALLS 32 + MCP_MAX_WAITING_CALLS 64).
OVERLOAD_CLIENTS = 200


def run(
    *, queries: list[str], corpus_10x: Path, chunks: int, seconds: float, outage_seconds: float, log: Log
) -> LoadResult:
    real = ingest.real_collection(corpus_10x, log)
    scale.grow_to(chunks, real=real, seed=chunks, log=log)
    result = LoadResult(chunks=Chunk.objects.count(), seconds=seconds)
    log_dir = settings.MNEMOSYNE_DATA_DIR
    # Float queries on 1 and 2 workers, then the opt-in lever: queries on the int8 graph (answers
    # move a little; docs/benchmarks.md).
    for workers, query_backend in ((1, "onnx"), (2, "onnx"), (1, "onnx-int8")):
        int8 = query_backend == "onnx-int8"
        kind = f"{workers} worker(s)" + (", int8 queries" if int8 else "")
        log(f"{result.chunks:,} chunks, {kind}: starting uvicorn")
        server_log = log_dir / ("load-int8.log" if int8 else f"load-{workers}.log")
        env = {"EMBEDDING_QUERY_BACKEND": query_backend} if int8 else None
        with mcp_server(server_log, workers=workers, env=env) as base:
            asyncio.run(_searches(base, queries, clients=CLIENTS, seconds=5))  # warm every worker
            if workers == 1:
                cpu = _cpu_per_search(base, queries)
                if int8:
                    result.cpu_int8 = cpu
                else:
                    result.cpu = cpu
                log(
                    f"one search costs {cpu.server_ms:.1f} ms of server CPU and "
                    f"{cpu.postgres_ms:.1f} ms of PostgreSQL CPU"
                )
            run_ = asyncio.run(_searches(base, queries, clients=CLIENTS, seconds=seconds))
            run_.label = f"{CLIENTS} clients, {kind}"
            run_.workers, run_.query_backend = workers, query_backend
            result.runs.append(run_)
            log(
                f"{run_.label}: {run_.calls_per_second:.1f} calls/s, "
                f"p95 {run_.p95:.0f} ms, {run_.errors} errors"
            )
            if workers == 1 and not int8:
                result.overload = _overload(base, queries, seconds=seconds, log=log)
            if workers == 2:
                result.mixed = _mixed(base, queries, corpus_10x, seconds=seconds, log=log)
    result.outage = outage.run(outage_seconds, log)
    return result


def _overload(base: str, queries: Sequence[str], *, seconds: float, log: Log) -> LoadRun:
    """OVERLOAD_CLIENTS searching at once, more than the worker admits: the rest must be shed."""
    run = asyncio.run(
        mcp_sessions.drive(
            f"{base}/mcp/",
            "search",
            lambda query: {"query": query, "limit": 20},
            queries,
            clients=OVERLOAD_CLIENTS,
            seconds=seconds,
            label=f"{OVERLOAD_CLIENTS} clients, 1 worker(s)",
        )
    )
    run.admitted = f"{settings.MCP_MAX_CALLS} calls at once, {settings.MCP_MAX_WAITING_CALLS} queued"
    log(
        f"{run.label}: {run.calls_per_second:.1f} calls/s, p95 {run.p95:.0f} ms, "
        f"{len(run.shed_ms)} shed, {run.errors} errors"
    )
    return run


async def _searches(
    base: str, queries: Sequence[str], *, clients: int, seconds: float, deadline: float | None = None
) -> LoadRun:
    run = LoadRun(label="", workers=0, clients=clients, seconds=seconds)
    end = deadline or time.monotonic() + seconds
    order = itertools.cycle(random.Random(clients).sample(list(queries), len(queries)))
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, headers=MCP_HEADERS, timeout=60, limits=limits) as client:

        async def one_client(number: int) -> None:
            while time.monotonic() < end:
                body = mcp_sessions.call_body("search", {"query": next(order), "limit": 20}, number)
                started = time.perf_counter()
                failure = None
                try:
                    response = await client.post("/mcp/", content=body)
                    if response.status_code != 200:
                        failure = f"HTTP {response.status_code}: {response.text[:120]}"
                    elif (result := mcp_sessions.sse_payload(response).get("result", {})).get("isError"):
                        failure = f"tool error: {json.dumps(result.get('content'))[:120]}"
                except (httpx.HTTPError, ValueError, RuntimeError) as exc:
                    failure = f"{type(exc).__name__}: {str(exc)[:120]}"
                if failure is None:
                    run.latencies_ms.append((time.perf_counter() - started) * 1000)
                else:
                    run.errors += 1
                    run.error_kinds[failure] = run.error_kinds.get(failure, 0) + 1

        started = time.monotonic()
        await asyncio.gather(*(one_client(n) for n in range(clients)))
        run.seconds = time.monotonic() - started
    return run


def cpu_seconds(processes: Sequence[psutil.Process]) -> float:
    total = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def server_processes(base: str) -> list[psutil.Process]:
    port = int(base.rsplit(":", 1)[1])
    for connection in psutil.net_connections("tcp"):
        if connection.laddr and connection.laddr.port == port and connection.status == psutil.CONN_LISTEN:
            parent = psutil.Process(connection.pid)
            return [parent, *parent.children(recursive=True)]
    raise RuntimeError("no process listens on the server's port")


def postgres_processes() -> list[psutil.Process]:
    pid_file = settings.MNEMOSYNE_DATA_DIR / "pgdata" / "postmaster.pid"
    postmaster = psutil.Process(int(pid_file.read_text().splitlines()[0]))
    return [postmaster, *postmaster.children(recursive=True)]


def _cpu_per_search(base: str, queries: Sequence[str]) -> CpuPerSearch:
    asked = list(itertools.islice(itertools.cycle(queries), CPU_CALLS))
    with httpx.Client(base_url=base, headers=MCP_HEADERS, timeout=60) as client:
        # Once untimed first: the pages these searches read are then in memory, as on a server
        # that has been answering (after a restart the kernel may have dropped them).
        for number, query in enumerate(asked):
            client.post(
                "/mcp/", content=mcp_sessions.call_body("search", {"query": query, "limit": 20}, number)
            ).raise_for_status()
        server, postgres = server_processes(base), postgres_processes()
        before = cpu_seconds(server), cpu_seconds(postgres)
        started = time.perf_counter()
        for number, query in enumerate(asked):
            response = client.post(
                "/mcp/", content=mcp_sessions.call_body("search", {"query": query, "limit": 20}, number)
            )
            response.raise_for_status()
    wall = time.perf_counter() - started
    postgres = postgres_processes()  # backends come and go; count the ones there now too
    after = cpu_seconds(server), cpu_seconds(postgres)
    return CpuPerSearch(
        calls=CPU_CALLS,
        server_ms=(after[0] - before[0]) * 1000 / CPU_CALLS,
        postgres_ms=max(0.0, after[1] - before[1]) * 1000 / CPU_CALLS,
        wall_ms=wall * 1000 / CPU_CALLS,
    )


def _sample(text: str, name: str, **labels: str) -> float:
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return float(sample.value)
    return 0.0


def _abstracts(corpus_10x: Path) -> list[str]:
    return [path.read_text() for path in sorted(corpus_10x.glob("*.md"))[:400]]


def _mixed(base: str, queries: Sequence[str], corpus_10x: Path, *, seconds: float, log: Log) -> MixedLoad:
    collection = ensure_collection(
        library=Collection.objects.get(name=ingest.REAL_COLLECTION).library, name="mixed"
    )
    texts = _abstracts(corpus_10x)
    mixed = MixedLoad(writers=MIXED_WRITERS, searchers=MIXED_SEARCHERS, seconds=seconds)
    counter = itertools.count()
    # Every write a new item, whatever earlier runs left in this index.
    run_id = f"{time.time_ns():x}"

    async def write(client: httpx.AsyncClient, into: list[float], server: list[float]) -> None:
        number = next(counter)
        arguments = {
            "collection_uid": collection.uid,
            "title": f"mixed {number}",
            "text": texts[number % len(texts)] + f"\n\n(copy {run_id}-{number})",
            "external_id": f"mixed-{run_id}-{number}",
        }
        started = time.perf_counter()
        try:
            response = await client.post(
                "/mcp/", content=mcp_sessions.call_body("upsert_item", arguments, number)
            )
            result = (
                mcp_sessions.sse_payload(response).get("result", {}) if response.status_code == 200 else {}
            )
        except (httpx.HTTPError, ValueError, RuntimeError):
            result = {}
        if result and not result.get("isError"):
            into.append((time.perf_counter() - started) * 1000)
            server.append(float(result.get("_meta", {}).get("elapsed_ms", float("nan"))))
            mixed.written.append(f"mixed-{run_id}-{number}")
        else:
            mixed.write_errors += 1

    async def alone() -> None:
        async with httpx.AsyncClient(base_url=base, headers=MCP_HEADERS, timeout=120) as client:
            for _ in range(5):
                await write(client, mixed.alone_ms, [])

    async def together() -> LoadRun:
        end = time.monotonic() + seconds
        async with httpx.AsyncClient(base_url=base, headers=MCP_HEADERS, timeout=120) as client:

            async def writer() -> None:
                while time.monotonic() < end:
                    await write(client, mixed.write_ms, mixed.write_server_ms)

            searching = asyncio.ensure_future(
                _searches(base, queries, clients=MIXED_SEARCHERS, seconds=seconds, deadline=end)
            )
            await asyncio.gather(*(writer() for _ in range(MIXED_WRITERS)))
            return await searching

    log("mixed load: a write alone, then 5 writers and 20 searchers")
    asyncio.run(alone())
    before = httpx.get(f"{base}/metrics").text
    mixed.search = asyncio.run(together())
    after = httpx.get(f"{base}/metrics").text
    # Where a write's time goes: waiting for the model, in the model, the rest (parse, SQL, store).
    for name, into in (
        ("mnemosyne_embedding_wait_seconds_sum", "wait"),
        ("mnemosyne_embedding_seconds_sum", "embed"),
    ):
        spent = _sample(after, name, kind="documents") - _sample(before, name, kind="documents")
        setattr(mixed, f"{into}_ms_per_write", spent * 1000 / max(1, len(mixed.write_ms)))
    mixed.search.label = f"{MIXED_SEARCHERS} searchers beside {MIXED_WRITERS} writers, 2 workers"
    done = set(
        Item.objects.filter(collection=collection, source__in=[f"external:{name}" for name in mixed.written])
        .filter(embedding_status=EmbeddingStatus.COMPLETE)
        .values_list("source", flat=True)
    )
    mixed.lost = [name for name in mixed.written if f"external:{name}" not in done]
    log(
        f"mixed: {len(mixed.write_ms)} writes, p50 {mixed.write_p50:.0f} ms "
        f"(alone {mixed.alone_p50:.0f} ms), "
        f"search p95 {mixed.search.p95:.0f} ms, lost {len(mixed.lost)}"
    )
    return mixed
