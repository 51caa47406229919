"""The console's search and evaluation views at scale (the `evaluation` part), on the index grown to
100k chunks (perturbed copies of real SciFact chunks, as the console part has it):

- the playground against MCP `search`, side by side: the same query and arguments (limit 10,
  `return_metadata: ["explain", "duplicates"]`, which the playground always asks for), the two
  requests taken in turn over HTTP from one uvicorn; medians and their ratio;
- an evaluation run of 300 SciFact train questions (their judged abstracts as evidence, imported
  as a CSV), run as `evaluate --set` runs it: wall time, searches/s, and the measures;
- the activity views with a million logged calls over 30 days (rolled up by day, as the worker
  does), as staff: p50 and p95 over HTTP for the last 1, 7 and 30 days;
- what the query log costs a call: `query_log.record` timed in-process (what a call waits: its row
  handed to the writer), then the writer's time a row until all are written.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

from benchmarks import console
from benchmarks.results import EvaluationBench, Timing

CHUNKS = 100_000
QUESTIONS = 300
SIDE_BY_SIDE = 40
WARMUP = 5
PAGE_REQUESTS = 30
LOGGED_CALLS = 1_000_000
LOGGED_DAYS = 30
RECORDS = 2000
PASSWORD = "benchmark evaluation password"
USER = "bench-evaluation"


def run(*, corpus_10x: Path, scifact: Path, log: Callable[[str], None]) -> EvaluationBench:
    from django.conf import settings
    from django.contrib.auth.models import User

    from benchmarks import ingest, scale, search

    real = ingest.real_collection(corpus_10x, log)
    log(f"evaluation: growing the index to {CHUNKS:,} chunks")
    scale.grow_to(CHUNKS, real=real, seed=CHUNKS, log=log)
    User.objects.filter(username=USER).delete()
    User.objects.create_superuser(USER, "bench@example.com", PASSWORD)
    result = EvaluationBench(chunks=_chunks())
    questions = _judged(scifact, corpus_10x)
    result.run = _evaluation_run(real.library, questions, log)
    with search.mcp_server(settings.MNEMOSYNE_DATA_DIR / "uvicorn-evaluation.log") as base:
        client = console.signed_in(base, USER, PASSWORD)
        try:
            result.side_by_side = _side_by_side(base, client, [text for text, _ in questions], log)
            _log_a_million(real.library, log)
            result.activity = [_timed(client, f"activity, last {days} days", days) for days in (1, 7, 30)]
            for timing in result.activity:
                log(f"evaluation: {timing.name}: p50 {timing.p50_ms:.1f} ms, p95 {timing.p95_ms:.1f} ms")
        finally:
            client.close()
    result.record_ms, result.written_ms_per_row = _record_cost(real.library)
    cost = result.record_ms
    log(
        f"evaluation: query log record p50 {cost.p50_ms:.3f} ms, p95 {cost.p95_ms:.3f} ms;"
        f" written {result.written_ms_per_row:.3f} ms a row"
    )
    return result


def _chunks() -> int:
    from mnemosyne.library.models import Chunk

    return Chunk.objects.count()


def _judged(scifact: Path, corpus_10x: Path) -> list[tuple[str, str]]:
    """(train question, the file its judged abstract was ingested from), one per question."""
    from benchmarks import corpus

    present = {path.stem for path in corpus_10x.glob("*.md")}
    texts = corpus.query_texts(scifact)
    pairs: dict[str, tuple[str, str]] = {}
    for query_id, doc_id in corpus.train_judgements(scifact):
        if doc_id in present and query_id in texts and query_id not in pairs:
            pairs[query_id] = (texts[query_id], f"{doc_id}.md")
        if len(pairs) == QUESTIONS:
            break
    return list(pairs.values())


def _evaluation_run(
    library: Any, questions: list[tuple[str, str]], log: Callable[[str], None]
) -> dict[str, Any]:
    from mnemosyne.evaluation import runs
    from mnemosyne.evaluation.models import EvaluationSet
    from mnemosyne.evaluation.services import create_set
    from mnemosyne.evaluation.set_imports import import_file
    from mnemosyne.library.models import Item

    sources = {
        Path(source).name: source
        for source in Item.objects.filter(collection__library=library).values_list("source", flat=True)
    }
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["question", "item"])
    writer.writerows([text, sources[name]] for text, name in questions if name in sources)
    EvaluationSet.objects.filter(name="SciFact train, 300").delete()
    evaluation_set = create_set(name="SciFact train, 300", library=library)
    started = time.perf_counter()
    report = import_file(evaluation_set, {"questions.csv": buffer.getvalue().encode()})
    import_seconds = time.perf_counter() - started
    refused = "; ".join(f"{where}: {why}" for where, why in report.refused) or "none"
    log(f"evaluation: imported {report.added} questions in {import_seconds:.1f} s; refused: {refused}")
    run = runs.execute(runs.start(evaluation_set, runs.RunSettings()))
    measures = dict(run.measures)
    log(
        f"evaluation: a run of {measures['questions']} questions at {run.configuration['chunks']:,} chunks: "
        f"{measures['wall_seconds']:.1f} s, {measures['searches_per_second']:.2f} searches/s, "
        f"nDCG@10 {measures['ndcg@10']}"
    )
    return {
        "imported": report.added,
        "refused": [why for _, why in report.refused],
        "import_seconds": round(import_seconds, 2),
        **measures,
    }


def _side_by_side(
    base: str, client: httpx.Client, queries: list[str], log: Callable[[str], None]
) -> dict[str, Timing]:
    """The playground and MCP search on the same queries, taken in turn (which goes first
    alternates): each request's wall time, and the search's own time as the server reports it
    (the tool call's elapsed_ms, which both show)."""
    mcp = httpx.Client(
        base_url=base,
        timeout=120,
        headers={"Accept": "application/json, text/event-stream", "Content-Type": "application/json"},
    )
    kept: dict[str, list[float]] = {name: [] for name in TIMED}
    try:
        for number, query in enumerate(queries[: WARMUP + SIDE_BY_SIDE]):
            steps: list[tuple[str, Callable[[], float]]] = [
                ("playground", functools.partial(_playground, client, query)),
                ("MCP search", functools.partial(_mcp, mcp, query, number)),
            ]
            if number % 2:
                steps.reverse()
            for name, step in steps:
                started = time.perf_counter()
                server_ms = step()
                if number >= WARMUP:
                    kept[f"{name}, the request"].append((time.perf_counter() - started) * 1000)
                    kept[f"{name}, the search in the server"].append(server_ms)
    finally:
        mcp.close()
    timings = {name: _timing(name, times) for name, times in kept.items()}
    for what in ("the request", "the search in the server"):
        playground, over_mcp = timings[f"playground, {what}"], timings[f"MCP search, {what}"]
        log(
            f"evaluation: {what}: playground p50 {playground.p50_ms:.1f} ms against MCP "
            f"{over_mcp.p50_ms:.1f} ms ({playground.p50_ms / over_mcp.p50_ms:.3f}×)"
        )
    return timings


TIMED = tuple(
    f"{name}, {what}"
    for what in ("the request", "the search in the server")
    for name in ("playground", "MCP search")
)
# The playground's own account of the search: "<dt>Time</dt><dd>31.2 ms in all</dd>".
PLAYGROUND_TIME = re.compile(r"<dt>Time</dt><dd>([0-9.]+) ms in all</dd>")


def _playground(client: httpx.Client, query: str) -> float:
    response = client.get(f"/console/playground/?{urlencode({'q': query, 'limit': 10})}")
    assert response.status_code == 200 and 'class="hit"' in response.text, response.text[:300]
    found = PLAYGROUND_TIME.search(response.text)
    assert found is not None, response.text[:300]
    return float(found.group(1))


def _mcp(client: httpx.Client, query: str, number: int) -> float:
    arguments = {"query": query, "limit": 10, "return_metadata": ["explain", "duplicates"]}
    body = {
        "jsonrpc": "2.0",
        "id": number,
        "method": "tools/call",
        "params": {"name": "search", "arguments": arguments},
    }
    response = client.post("/mcp/", content=json.dumps(body).encode())
    response.raise_for_status()
    result = response.json()["result"]
    assert result["isError"] is False, response.text[:300]
    return float(result["_meta"]["elapsed_ms"])


def _log_a_million(library: Any, log: Callable[[str], None]) -> None:
    """A million calls over the last 30 days (one in ten a search that found nothing), then the past
    days rolled up as the worker rolls them up."""
    from django.db import connection

    from mnemosyne.library import query_log

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE library_querylog, library_querylogday")
        cursor.execute(
            """
            INSERT INTO library_querylog
                (at, tool, transport, caller, library_id, query, hits, top_score, ms, outcome, reason)
            SELECT now() - (n::float8 / %(calls)s) * interval '30 days',
                   (ARRAY['search', 'search', 'search', 'get_chunk', 'list_items'])[1 + n %% 5],
                   (ARRAY['http', 'stdio', 'console'])[1 + n %% 3],
                   'token ' || (n %% 40),
                   CASE WHEN n %% 7 = 0 THEN NULL ELSE %(library)s END,
                   'question number ' || n || ' about topic ' || (n %% 997),
                   CASE WHEN n %% 10 = 0 THEN 0 ELSE 1 + n %% 10 END,
                   CASE WHEN n %% 10 = 0 THEN NULL ELSE (n %% 1000) / 1000.0 END,
                   5 + (n %% 400) * 0.7,
                   CASE WHEN n %% 50 = 0 THEN 'error' ELSE 'ok' END,
                   CASE WHEN n %% 50 = 0 THEN 'the embedding endpoint did not answer' ELSE '' END
            FROM generate_series(1, %(calls)s) AS n
            """,
            {"calls": LOGGED_CALLS, "library": library.pk},
        )
        cursor.execute("ANALYZE library_querylog")
    rolled = query_log.roll_up()
    log(
        f"evaluation: {LOGGED_CALLS:,} logged calls written and {len(rolled)} days rolled up "
        f"in {time.perf_counter() - started:.1f} s"
    )


def _timed(client: httpx.Client, name: str, days: int) -> Timing:
    path = f"/console/activity/?days={days}"
    for _ in range(WARMUP):
        client.get(path)
    times = []
    for _ in range(PAGE_REQUESTS):
        started = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.text[:300]
    return _timing(name, times)


def _record_cost(library: Any) -> tuple[Timing, float]:
    from mnemosyne.library import query_log

    call = query_log.Call(
        tool="search",
        transport="http",
        caller="bench",
        library_uid=library.uid,
        query="how much does the query log cost a search",
        hits=10,
        top_score=0.5,
        ms=20.0,
        outcome="ok",
    )
    times = []
    began = time.perf_counter()
    for _ in range(RECORDS):
        started = time.perf_counter()
        query_log.record(call)
        times.append((time.perf_counter() - started) * 1000)
    query_log.flush()
    return _timing("query_log.record", times), (time.perf_counter() - began) * 1000 / RECORDS


def _timing(name: str, times: list[float]) -> Timing:
    return Timing(name, len(times), *console.spread(times))
