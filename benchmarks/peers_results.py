"""What the peers part measured, and its section of the report."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from benchmarks.load_results import LoadRun


@dataclass
class PeerRun:
    round: int
    run: LoadRun
    # CPU of the server's process tree (and PostgreSQL's, for Mnemosyne) over the run, per answered call.
    cpu_ms_per_search: float
    # Of which the database's (PostgreSQL's; 0 for a peer with its store in its own process).
    database_ms_per_search: float = 0.0


@dataclass
class SystemFigures:
    name: str
    version: str
    # What the search call was (tool and its arguments but the query).
    call: str
    documents: int
    load_seconds: float
    ndcg_at_10: float = math.nan
    quality_queries: int = 0
    quality_p50_ms: float = math.nan
    runs: list[PeerRun] = field(default_factory=list)

    def of(self, clients: int) -> list[PeerRun]:
        return [run for run in self.runs if run.run.clients == clients]

    def median(self, clients: int, measure: str) -> float:
        values = [_measure(run, measure) for run in self.of(clients)]
        values = [value for value in values if not math.isnan(value)]
        return statistics.median(values) if values else math.nan

    def errors(self, clients: int) -> int:
        return sum(run.run.errors for run in self.of(clients))


def _measure(run: PeerRun, measure: str) -> float:
    if measure == "cpu":
        return run.cpu_ms_per_search
    if measure == "database":
        return run.database_ms_per_search
    value: float = getattr(run.run, measure)
    return value


@dataclass
class PeersResult:
    commit: str
    corpus: str
    queries: int
    rounds: int
    one_seconds: float
    many_seconds: float
    many_clients: int
    systems: list[SystemFigures] = field(default_factory=list)

    def ratio_to_best_peer(self, clients: int) -> float:
        ours = self.systems[0].median(clients, "calls_per_second")
        peers = [system.median(clients, "calls_per_second") for system in self.systems[1:]]
        best = max((value for value in peers if not math.isnan(value)), default=math.nan)
        return ours / best if best and not math.isnan(best) else math.nan


def _of_database(system: SystemFigures, clients: int) -> str:
    database = system.median(clients, "database")
    return f" (PostgreSQL {_cell(database)})" if database > 0 else ""


def _cell(value: float, digits: int = 1) -> str:
    return "–" if math.isnan(value) else f"{value:,.{digits}f}"


def section(result: PeersResult) -> list[str]:
    many = result.many_clients
    lines = [
        f"### Beside the peers ({result.corpus}, the same MiniLM-L6 weights, MCP streamable HTTP, limit 10)",
        "",
        f"Commit {result.commit}. Quality: nDCG@10 over the {result.queries} train queries, through each "
        f"server's search tool. Load: {result.rounds} rounds, each system in turn, 1 client for "
        f"{result.one_seconds:.0f} s then {many} clients for {result.many_seconds:.0f} s (closed loop, one "
        "client process on the same two cores); medians over the rounds. CPU per search: the server's "
        "process tree, and PostgreSQL's for Mnemosyne, over the run, per answered call.",
        "",
        f"| system | nDCG@10 | 1 client: calls/s, p50 ms | CPU ms/search | {many} clients: calls/s, "
        f"p50 / p95 ms, errors | CPU ms/search |",
        "|---|---|---|---|---|---|",
    ]
    for system in result.systems:
        lines.append(
            f"| {system.name} {system.version} | {_cell(system.ndcg_at_10, 4)} | "
            f"{_cell(system.median(1, 'calls_per_second'))}, {_cell(system.median(1, 'p50'))} | "
            f"{_cell(system.median(1, 'cpu'))} | "
            f"{_cell(system.median(many, 'calls_per_second'))}, {_cell(system.median(many, 'p50'), 0)} / "
            f"{_cell(system.median(many, 'p95'), 0)}, {system.errors(many)} | "
            f"{_cell(system.median(many, 'cpu'))}{_of_database(system, many)} |"
        )
    lines += [
        "",
        f"Mnemosyne against the best peer at {many} clients: "
        f"**{_cell(result.ratio_to_best_peer(many), 2)}×** "
        f"(1 client: {_cell(result.ratio_to_best_peer(1), 2)}×).",
        "",
        "Each round:",
        "",
        "| system | round | clients | calls/s | p50 / p95 ms | CPU ms/search | errors |",
        "|---|---|---|---|---|---|---|",
    ]
    for system in result.systems:
        for peer_run in system.runs:
            run = peer_run.run
            lines.append(
                f"| {system.name} | {peer_run.round} | {run.clients} | {_cell(run.calls_per_second)} | "
                f"{_cell(run.p50, 0)} / {_cell(run.p95, 0)} | {_cell(peer_run.cpu_ms_per_search)} | "
                f"{run.errors} |"
            )
    lines += ["", "The calls, and how each system was loaded:", ""]
    for system in result.systems:
        lines.append(
            f"- {system.name}: `{system.call}`; {system.documents:,} documents loaded in "
            f"{system.load_seconds:.0f} s."
        )
    lines.append("")
    return lines
