"""What the load part measured (concurrent searches, a mixed load, an outage), and its section of
the report."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from benchmarks.cells import number
from benchmarks.percentiles import percentile


@dataclass
class LoadRun:
    """Concurrent clients calling search for a while."""

    label: str
    workers: int
    clients: int
    seconds: float
    latencies_ms: list[float] = field(default_factory=list)
    # How the server embedded the queries (EMBEDDING_QUERY_BACKEND).
    query_backend: str = "onnx"
    errors: int = 0
    # What each error was (an HTTP status and its start, a tool error, an exception), with counts.
    error_kinds: dict[str, int] = field(default_factory=dict)
    # Calls the server shed (503 busy, mcp_server/transports/admission.py): how long each took to be
    # told. Not errors: the client waits the Retry-After and calls again.
    shed_ms: list[float] = field(default_factory=list)
    # What the server admitted at once and queued, when the run was meant to overload it.
    admitted: str = ""

    @property
    def calls_per_second(self) -> float:
        return len(self.latencies_ms) / self.seconds if self.seconds > 0 else math.nan

    @property
    def p50(self) -> float:
        return percentile(self.latencies_ms, 0.5)

    @property
    def p95(self) -> float:
        return percentile(self.latencies_ms, 0.95)

    @property
    def p99(self) -> float:
        return percentile(self.latencies_ms, 0.99)


@dataclass(frozen=True)
class CpuPerSearch:
    calls: int
    server_ms: float
    postgres_ms: float
    wall_ms: float

    @property
    def ceiling_calls_per_second(self) -> float:
        """What 2 cores could serve at most if a search cost only this CPU."""
        spent = self.server_ms + self.postgres_ms
        return 2 * 1000 / spent if spent > 0 else math.nan


@dataclass
class MixedLoad:
    writers: int
    searchers: int
    seconds: float
    alone_ms: list[float] = field(default_factory=list)
    write_ms: list[float] = field(default_factory=list)
    write_server_ms: list[float] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    write_errors: int = 0
    lost: list[str] = field(default_factory=list)
    search: LoadRun = field(default_factory=lambda: LoadRun("", 2, 0, 0.0))
    # Per write, from the server's metrics: waiting for the model (another batch in it), in it.
    wait_ms_per_write: float = math.nan
    embed_ms_per_write: float = math.nan

    @property
    def write_mean(self) -> float:
        return statistics.fmean(self.write_ms) if self.write_ms else math.nan

    @property
    def write_p50(self) -> float:
        return percentile(self.write_ms, 0.5)

    @property
    def write_p95(self) -> float:
        return percentile(self.write_ms, 0.95)

    @property
    def alone_p50(self) -> float:
        return percentile(self.alone_ms, 0.5)

    @property
    def server_share(self) -> float:
        """Of a write's time as the client saw it, the share spent inside the tool call."""
        pairs = [
            (s, c) for s, c in zip(self.write_server_ms, self.write_ms, strict=False) if not math.isnan(s)
        ]
        return sum(s for s, _ in pairs) / sum(c for _, c in pairs) if pairs else math.nan


@dataclass
class OutageRun:
    down_seconds: float
    clients: int
    answers_while_down: int = 0
    unavailable_503: int = 0
    tool_errors: int = 0
    # Answers that were neither: a 5xx other than 503, or no answer at all (a reset connection).
    failures: int = 0
    recovery_seconds: float = math.nan
    log_lines: int = 0
    # Lines at WARNING or above (at LOG_LEVEL=info every tool call also writes one INFO line).
    log_lines_not_access: int = 0
    tracebacks: int = 0


@dataclass
class LoadResult:
    chunks: int
    seconds: float
    runs: list[LoadRun] = field(default_factory=list)
    cpu: CpuPerSearch | None = None
    # The same single-client measure with the queries on the int8 graph (EMBEDDING_QUERY_BACKEND).
    cpu_int8: CpuPerSearch | None = None
    mixed: MixedLoad | None = None
    outage: OutageRun | None = None
    # More clients than a worker admits (MCP_MAX_CALLS + MCP_MAX_WAITING_CALLS): load shedding.
    overload: LoadRun | None = None


def section(load: LoadResult) -> list[str]:
    """The load part's section of the report."""
    lines = [
        f"### Load ({load.chunks:,} chunks, search `limit` 20, MCP over HTTP, {load.seconds:.0f} s each)",
        "",
    ]
    for cpu, queries in ((load.cpu, ""), (load.cpu_int8, ", queries on the int8 graph")):
        if cpu is None:
            continue
        lines += [
            f"One search, single client ({cpu.calls} in a row{queries}): {number(cpu.server_ms)} ms of "
            f"server CPU (uvicorn's processes) and {number(cpu.postgres_ms)} ms of PostgreSQL CPU, "
            f"{number(cpu.wall_ms)} ms wall time; 2 cores could serve at most "
            f"~{number(cpu.ceiling_calls_per_second, 0)} calls/s at that cost.",
            "",
        ]
    lines += ["| run | calls/s | p50 ms | p95 ms | p99 ms | errors |", "|---|---|---|---|---|---|"]
    runs = list(load.runs) + ([load.mixed.search] if load.mixed is not None else [])
    for run in runs:
        lines.append(
            f"| {run.label} | {number(run.calls_per_second)} | {number(run.p50, 0)} | {number(run.p95, 0)} "
            f"| {number(run.p99, 0)} | {run.errors} |"
        )
    lines.append("")
    for run in runs:
        for kind, count in sorted(run.error_kinds.items()):
            lines.append(f"- {run.label}, error ×{count}: `{kind}`")
    if any(run.error_kinds for run in runs):
        lines.append("")
    by_kind = {(run.workers, run.query_backend): run for run in load.runs}
    one = by_kind.get((1, "onnx"))
    if one is not None and one.calls_per_second > 0:
        for other, said in (
            ((2, "onnx"), "2 workers against 1"),
            ((1, "onnx-int8"), "int8 queries against float"),
        ):
            if other in by_kind:
                ratio = by_kind[other].calls_per_second / one.calls_per_second
                lines += [f"{said}: {number(ratio, 2)}× the calls/s.", ""]
    if load.mixed is not None:
        mixed = load.mixed
        lines += [
            f"Mixed ({mixed.writers} writers, {mixed.searchers} searchers, 2 workers): "
            f"{len(mixed.write_ms)} writes, p50 {number(mixed.write_p50, 0)} ms, "
            f"p95 {number(mixed.write_p95, 0)} ms (a write alone: p50 {number(mixed.alone_p50, 0)} ms); "
            f"{number(100 * mixed.server_share, 0)} % of a write's time is inside the tool call; "
            f"of a write's mean {number(mixed.write_mean, 0)} ms, "
            f"{number(mixed.wait_ms_per_write, 0)} ms waiting for the embedding model "
            f"(one batch at a time per worker), {number(mixed.embed_ms_per_write, 0)} ms in it; "
            f"{mixed.write_errors} write errors; lost (answered as written, not complete in the database): "
            f"{len(mixed.lost)}.",
            "",
        ]
    if load.overload is not None:
        over = load.overload
        shed = sorted(over.shed_ms)
        slowest = max(over.latencies_ms, default=math.nan)
        lines += [
            f"Overload ({over.clients} clients, 1 worker, a connection each; the worker takes "
            f"{over.admitted}): "
            f"{number(over.calls_per_second)} calls/s answered, p50 {number(over.p50, 0)} ms, "
            f"p95 {number(over.p95, 0)} ms, slowest {number(slowest, 0)} ms; "
            f"{len(shed)} calls shed (HTTP 503 busy with Retry-After; each client waited it and called "
            f"again), told in p50 {number(percentile(shed, 0.5), 0)} ms, slowest "
            f"{number(max(shed, default=math.nan), 0)} ms; {over.errors} errors.",
            "",
        ]
    if load.outage is not None:
        outage = load.outage
        per_second = outage.answers_while_down / outage.down_seconds if outage.down_seconds else math.nan
        lines += [
            f"Outage (PostgreSQL stopped {outage.down_seconds:.0f} s under {outage.clients} clients calling "
            f"`list_libraries` with a token): {outage.answers_while_down} answers while it was down "
            f"({number(per_second)} a second): {outage.unavailable_503} HTTP 503 with Retry-After, "
            f"{outage.tool_errors} tool errors saying so, {outage.failures} other failures (5xx, reset); "
            f"first normal answer {number(outage.recovery_seconds, 2)} s after the restart; the server "
            f"logged {outage.log_lines_not_access} warning or error lines, {outage.tracebacks} tracebacks "
            f"({outage.log_lines} lines in all, with one INFO line per tool call).",
            "",
        ]
    return lines
