"""The Markdown report of a run, and its place in docs/benchmarks.md (pure)."""

from __future__ import annotations

from pathlib import Path
from statistics import median

from benchmarks import copies_results, documents_report, filings, load_results, million_report, peers_results
from benchmarks.cells import mib, number, verdict
from benchmarks.results import (
    CONCEPT_RATE_TARGET,
    INGEST_RATIO_TARGET,
    INGEST_SPEEDUP_TARGET,
    MCP_OVERHEAD_TARGET,
    MCP_STAGES,
    SEARCH_P50_TARGET_MS,
    SEARCH_P95_TARGET_MS,
    SEARCH_TARGET_CHUNKS,
    STAGE_LABELS,
    AccessTiming,
    BenchResult,
    ConsoleTiming,
    DiversityTiming,
    EvaluationBench,
    IngestResult,
    SearchSize,
)

START_MARKER = "<!-- bench:results:start -->"
END_MARKER = "<!-- bench:results:end -->"


class MarkersMissing(ValueError):
    """The page has no results section to replace."""


def splice(page: str, section: str) -> str:
    """The page with everything between the result markers replaced by `section`."""
    start, end = page.find(START_MARKER), page.find(END_MARKER)
    if start == -1 or end == -1 or end < start:
        raise MarkersMissing(f"the page needs {START_MARKER} … {END_MARKER} around its results")
    return f"{page[: start + len(START_MARKER)]}\n{section.strip()}\n{page[end:]}"


def write_into(path: Path, section: str) -> None:
    path.write_text(splice(path.read_text(encoding="utf-8"), section), encoding="utf-8")


def render(result: BenchResult) -> str:
    lines = [
        "## Results",
        "",
        f"Measured {result.started} – {result.finished} ({result.mode} run).",
        "",
        "| machine | |",
        "|---|---|",
        *(f"| {key} | {value} |" for key, value in result.machine.items()),
        "",
        "Settings: " + ", ".join(f"`{key}={value}`" for key, value in result.settings.items()) + ".",
        "",
    ]
    if result.ingest is not None:
        lines += _ingest(result.ingest)
    if result.search:
        lines += _search(result.search)
    if result.diversity:
        lines += _diversity(result.diversity)
    if result.access:
        lines += _access(result.access)
    if result.console:
        lines += _console(result.console)
    if result.evaluation:
        lines += _evaluation(result.evaluation)
    if result.extractors:
        lines += documents_report.extractors(result.extractors)
    if result.documents is not None:
        lines += documents_report.documents(result.documents)
    if result.filings is not None:
        lines += filings.section(result.filings)
    if result.ocr:
        lines += documents_report.ocr(result.ocr)
    if result.load is not None:
        lines += load_results.section(result.load)
    if result.million is not None:
        lines += million_report.section(result.million)
    if result.copies is not None:
        lines += copies_results.section(result.copies)
    if result.sync is not None:
        lines += documents_report.sync(result.sync)
    if result.formats:
        lines += documents_report.formats(result.formats)
    if result.peers is not None:
        lines += peers_results.section(result.peers)
    if result.notes:
        lines += ["Notes:", "", *(f"- {note}" for note in result.notes), ""]
    return "\n".join(lines)


def _diversity(timings: list[DiversityTiming]) -> list[str]:
    lines = [
        "### Result diversity (MMR, `diversity` = 0.5; milliseconds, median)",
        "",
        "| limit | window | vectorised (the service) | pairwise (before) | speed-up | same order |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {t.limit} | {t.window} | {number(t.vectorised_ms, 2)} | {number(t.pairwise_ms)} "
        f"| {number(t.pairwise_ms / t.vectorised_ms, 0)}× | {'yes' if t.same_order else '**no**'} |"
        for t in timings
    ]
    return [*lines, ""]


def _console(timings: list[ConsoleTiming]) -> list[str]:
    first = timings[0]
    lines = [
        f"### The console's pages ({first.chunks:,} chunks; {first.items:,} items in the collection listed; "
        "milliseconds over HTTP, a signed-in client on the same machine)",
        "",
        "| page | requests | p50 | p95 |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {t.name} | {t.requests} | {number(t.p50_ms, 1 if t.p50_ms >= 1 else 4)} "
        f"| {number(t.p95_ms, 1 if t.p95_ms >= 1 else 4)} |"
        for t in timings
    ]
    return [*lines, ""]


def _evaluation(bench: EvaluationBench) -> list[str]:
    lines = [f"### The playground, an evaluation run and the activity views ({bench.chunks:,} chunks)", ""]
    if bench.side_by_side:
        timed = bench.side_by_side
        lines += [
            "| the same search (limit 10, explain, duplicates), in turn | requests | p50 ms | p95 ms |",
            "|---|---|---|---|",
            *(
                f"| {t.name} | {t.requests} | {number(t.p50_ms, 1)} | {number(t.p95_ms, 1)} |"
                for t in timed.values()
            ),
            "",
        ]
        for what in ("the search in the server", "the request"):
            ratio = timed[f"playground, {what}"].p50_ms / timed[f"MCP search, {what}"].p50_ms
            lines.append(
                f"- {what.capitalize()}: the playground takes {number(ratio, 3)}× MCP's time at the median "
                f"({number(100 * (ratio - 1), 1)} %)."
            )
        lines.append("")
    run = bench.run
    if run:
        latency = run.get("latency_ms", {})
        lines += [
            f"An evaluation run of {run.get('questions')} questions (imported from a CSV in "
            f"{run.get('import_seconds')} s; refused: {'; '.join(run.get('refused', [])) or 'none'}): "
            f"{number(run.get('wall_seconds', 0), 1)} s wall, "
            f"{number(run.get('searches_per_second', 0), 2)} searches/s, search p50 {latency.get('p50')} ms, "
            f"p95 {latency.get('p95')} ms; success@1 {run.get('success@1')}, "
            f"success@10 {run.get('success@10')}, nDCG@10 {run.get('ndcg@10')}, MRR@10 {run.get('mrr@10')}.",
            "",
        ]
    if bench.activity:
        lines += [
            "| activity view, a million logged calls (staff) | requests | p50 ms | p95 ms |",
            "|---|---|---|---|",
            *(
                f"| {t.name} | {t.requests} | {number(t.p50_ms, 1)} | {number(t.p95_ms, 1)} |"
                for t in bench.activity
            ),
            "",
        ]
    if bench.record_ms:
        cost = bench.record_ms
        lines += [
            f"The query log's cost per call (`query_log.record`, {cost.requests} calls, in-process): "
            f"p50 {number(cost.p50_ms, 3)} ms, p95 {number(cost.p95_ms, 3)} ms to hand the row over"
            + (
                f"; {number(bench.written_ms_per_row, 3)} ms a row until the writer had written them all."
                if bench.written_ms_per_row is not None
                else "."
            ),
            "",
        ]
    return lines


def _access(timings: list[AccessTiming]) -> list[str]:
    lines = [
        "### Deciding a caller (identify a token, decide a `search` on a named library; microseconds)",
        "",
        "| policy | clients | decisions | median | p95 | decisions/s | queries each |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| `{t.policy}` | {t.clients} | {t.decisions} | {number(t.median_us, 0)} | {number(t.p95_us, 0)} "
        f"| {number(t.per_second, 0)} | {t.queries} |"
        for t in timings
    ]
    by = {(t.policy, t.clients): t for t in timings}
    for clients in sorted({t.clients for t in timings}):
        open_, grants = by.get(("open", clients)), by.get(("grants", clients))
        if open_ and grants:
            lines += [
                "",
                f"The grant check at {clients} client(s): "
                f"+{number(grants.median_us - open_.median_us, 0)} µs "
                f"a request at the median ({number(grants.median_us / open_.median_us, 2)}× `open`).",
            ]
    return [*lines, ""]


def _on_torch(ingest: IngestResult) -> list[str]:
    if not ingest.torch_runs_1x:
        return []
    return [
        f"| end to end on torch, chunks/s "
        f"| {', '.join(number(run.chunks_per_second) for run in ingest.torch_runs_1x)} "
        f"| {number(ingest.torch_median)} | |",
        f"| end to end / end to end on torch | | {number(ingest.speedup, 2)} "
        f"| ≥ {INGEST_SPEEDUP_TARGET:.1f}: {verdict(ingest.speedup >= INGEST_SPEEDUP_TARGET)} |",
    ]


def _concepts(ingest: IngestResult) -> list[str]:
    if not ingest.concept_rates:
        return []
    met = ingest.concept_median >= CONCEPT_RATE_TARGET
    return [
        f"| concept extraction alone (`extract_concepts`), chunks per CPU second "
        f"| {', '.join(number(rate, 0) for rate in ingest.concept_rates)} "
        f"| {number(ingest.concept_median, 0)} | ≥ {CONCEPT_RATE_TARGET}: {verdict(met)} |",
    ]


def _ingest(ingest: IngestResult) -> list[str]:
    e2e_rates = [run.chunks_per_second for run in ingest.runs_1x]
    ratio_met = ingest.ratio >= INGEST_RATIO_TARGET
    lines = [
        f"### Ingest throughput (1× = {ingest.documents:,} SciFact documents, "
        f"{ingest.planned_chunks:,} chunks)",
        "",
        "Run in the order raw, end to end, end to end on torch, raw, end to end, end to end on torch, raw; "
        "each end-to-end run into an empty index. On torch: the same ingest with the documents embedded "
        "by torch (`EMBEDDING_DOCUMENT_BACKEND=torch`, the document encoder before int8).",
        "",
        "| measure | runs, in order | median | target |",
        "|---|---|---|---|",
        f"| raw embedding (`embed_batch`), chunks/s | {', '.join(number(r) for r in ingest.raw_rates)} "
        f"| {number(ingest.raw_median)} | |",
        f"| end to end (`manage.py ingest`), chunks/s | {', '.join(number(r) for r in e2e_rates)} "
        f"| {number(ingest.e2e_median)} | |",
        *_on_torch(ingest),
        *_concepts(ingest),
        f"| end to end / raw | | {number(ingest.ratio, 2)} "
        f"| ≥ {INGEST_RATIO_TARGET:.1f}: {verdict(ratio_met)} |",
        f"| share of the ingest time the model was busy (`embed_batch`), same process "
        f"| {', '.join(number(run.embedding_share, 2) for run in ingest.runs_1x)} "
        f"| {number(ingest.embedding_share_median, 2)} | |",
        "",
        "The model runs in a thread of its own beside parsing, chunking and the database writes, so "
        "the last row shows whether anything else ever kept it waiting (1.0: never). It runs slower "
        "there than alone, because the rest of the ingest shares the two cores with it; that cost is "
        "what the end to end / raw ratio measures.",
        "",
    ]
    runs_10x = ingest.runs_10x
    if runs_10x:
        first_10x = runs_10x[0]
        lines += [
            f"| ingest process | 1× (median of {len(ingest.runs_1x)} runs) "
            f"| 10× (median of {len(runs_10x)} runs) | 10× / 1× |",
            "|---|---|---|---|",
            f"| documents / chunks | {ingest.documents:,} / {ingest.planned_chunks:,} "
            f"| {first_10x.documents:,} / {first_10x.chunks:,} | |",
            f"| RSS after model load | {mib(median([run.rss_after_load_bytes for run in ingest.runs_1x]))} "
            f"| {mib(median([run.rss_after_load_bytes for run in runs_10x]))} | |",
            f"| RSS at 25 / 50 / 75 / 100 % of the run (first run) "
            f"| {' / '.join(mib(v) for v in ingest.runs_1x[0].rss_quarters_bytes)} "
            f"| {' / '.join(mib(v) for v in first_10x.rss_quarters_bytes)} | |",
            f"| peak RSS, runs in order | {', '.join(mib(run.peak_rss_bytes) for run in ingest.runs_1x)} "
            f"| {', '.join(mib(run.peak_rss_bytes) for run in runs_10x)} | |",
            f"| peak RSS, median | {mib(ingest.peak_rss_1x)} | {mib(ingest.peak_rss_10x)} "
            f"| {number(ingest.rss_ratio, 2)} (target ≈ 1: {verdict(ingest.rss_ratio <= 1.1)}) |",
            f"| end to end, chunks/s | {number(ingest.e2e_median)} "
            f"| {number(median([run.chunks_per_second for run in runs_10x]))} | |",
            f"| share of the time the model was busy | {number(ingest.embedding_share_median, 2)} "
            f"| {number(median([run.embedding_share for run in runs_10x]), 2)} | |",
            "",
        ]
    return lines


def _search(sizes: list[SearchSize]) -> list[str]:
    first = sizes[0]
    header = " | ".join(f"{size.chunks:,} chunks p50 | p95" for size in sizes)
    lines = [
        f"### Search latency ({first.queries} SciFact train queries, after warm-up; milliseconds)",
        "",
        f"| stage | {header} |",
        "|---|" + "---|---|" * len(sizes),
    ]
    for stage, label in STAGE_LABELS.items():
        cells = " | ".join(f"{number(size.p50(stage))} | {number(size.p95(stage))}" for size in sizes)
        lines.append(f"| {label} | {cells} |")
    rest = " | ".join(f"{number(size.rest_p50)} | " for size in sizes)
    lines.append(
        "| rest of the service: fusion, hydration, collapsing (derived: service − the longer of "
        f"embedding + vector leg and full-text leg, median) | {rest} |"
    )
    for stage, answer in zip(MCP_STAGES, ("JSON answer", "streamed answer"), strict=True):
        overhead = " | ".join(f"{number(100 * size.overhead(stage))} % | " for size in sizes)
        lines.append(f"| MCP + HTTP overhead, {answer}: (MCP p50 − service p50) / service p50 | {overhead} |")
    lines.append("")
    lines += _targets(sizes)
    lines += [
        "| index | real chunks | copies | rows + HNSW | tsvector + postings | graph | chunk store "
        "| VACUUM ANALYZE |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size in sizes:
        build = size.build
        lines.append(
            f"| {size.chunks:,} | {build.real_chunks:,} | {build.copied_chunks:,} "
            f"| {number(build.rows_seconds)} s | {number(build.search_index_seconds)} s "
            f"| {number(build.graph_seconds)} s | {number(build.store_seconds)} s "
            f"| {number(build.vacuum_seconds)} s |"
        )
    return [*lines, ""]


def _targets(sizes: list[SearchSize]) -> list[str]:
    at_target = [size for size in sizes if size.chunks >= SEARCH_TARGET_CHUNKS]
    if not at_target:
        return [f"Targets apply at {SEARCH_TARGET_CHUNKS:,} chunks; this run did not build that size.", ""]
    size = at_target[0]
    p50, p95 = size.p50("mcp"), size.p95("mcp")
    lines = [
        f"Targets at {size.chunks:,} chunks, through MCP: p50 {number(p50)} ms "
        f"(≤ {SEARCH_P50_TARGET_MS:.0f}: {verdict(p50 <= SEARCH_P50_TARGET_MS)}), "
        f"p95 {number(p95)} ms (≤ {SEARCH_P95_TARGET_MS:.0f}: {verdict(p95 <= SEARCH_P95_TARGET_MS)}), "
        f"MCP + HTTP overhead {number(100 * size.mcp_overhead)} % "
        f"(≤ {100 * MCP_OVERHEAD_TARGET:.0f} %: {verdict(size.mcp_overhead <= MCP_OVERHEAD_TARGET)}). "
        f"Largest part of the service time: {STAGE_LABELS[size.dominant_leg()]} "
        f"({number(size.p50(size.dominant_leg()))} ms p50).",
        "",
    ]
    return lines
