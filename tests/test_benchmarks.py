"""The benchmark's pure helpers: corpus preparation, perturbation, statistics and the report splice."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from benchmarks import corpus, report
from benchmarks.machine import cpu_model, memory_total_gib
from benchmarks.results import (
    BenchResult,
    BuildTimes,
    IngestResult,
    IngestRun,
    MillionResult,
    SearchSize,
    percentile,
)


def test_batches_group_whole_documents_until_the_pipeline_would_flush() -> None:
    assert corpus.pipeline_batches([60, 60, 60, 10], 128) == [(0, 180), (180, 190)]
    assert corpus.pipeline_batches([200], 128) == [(0, 200)]
    assert corpus.pipeline_batches([], 128) == []


def test_a_perturbed_copy_drops_words_but_keeps_the_rest_in_order_within_sentences() -> None:
    text = " ".join(f"Sentence {n} has several distinct words in it." for n in range(20))
    copy = corpus.perturb_text(text, random.Random(1))
    assert copy != text
    original_words, copied_words = text.split(), copy.split()
    assert 0.7 * len(original_words) < len(copied_words) < len(original_words)
    assert set(copied_words) <= set(original_words)


def test_perturbation_is_reproducible_from_the_seed() -> None:
    text = "One. Two words here. Three more words there."
    assert corpus.perturb_text(text, random.Random(7)) == corpus.perturb_text(text, random.Random(7))


def test_a_perturbed_vector_is_unit_length_and_close_to_the_original() -> None:
    rng = np.random.default_rng(0)
    original = rng.normal(size=384)
    original /= np.linalg.norm(original)
    copy = corpus.perturb_vector(original, rng)
    assert math.isclose(float(np.linalg.norm(copy)), 1.0, rel_tol=1e-5)
    assert 0.85 < float(np.dot(original, copy)) < 0.99


def test_train_queries_are_the_judged_ones_in_file_order(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\n3\t10\t1\n1\t11\t1\n")
    lines = [json.dumps({"_id": qid, "text": f"query {qid}"}) for qid in ("1", "2", "3")]
    (tmp_path / "queries.jsonl").write_text("\n".join(lines) + "\n")
    assert corpus.train_queries(tmp_path) == ["query 1", "query 3"]


def test_documents_become_one_markdown_file_each(tmp_path: Path) -> None:
    records = [{"_id": "7", "title": "A  title", "text": "Body."}, {"_id": "8", "title": "", "text": "B."}]
    (tmp_path / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    documents = corpus.read_documents(tmp_path, limit=5)
    corpus.write_markdown_corpus(documents, tmp_path / "out")
    assert (tmp_path / "out" / "7.md").read_text() == "# A title\n\nBody.\n"
    assert (tmp_path / "out" / "8.md").read_text() == "B.\n"


def test_percentiles_interpolate_and_are_nan_without_values() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert percentile([10.0] * 3 + [100.0], 0.95) == pytest.approx(86.5)
    assert math.isnan(percentile([], 0.5))


def test_machine_details_are_read_from_proc_files() -> None:
    assert cpu_model("processor\t: 0\nmodel name\t: Example CPU @ 2.50GHz\n") == "Example CPU @ 2.50GHz"
    assert memory_total_gib("MemTotal:       24684132 kB\n") == pytest.approx(23.54, abs=0.01)


def test_the_results_section_is_replaced_and_the_rest_of_the_page_kept() -> None:
    page = f"# Title\n\nBefore.\n\n{report.START_MARKER}\nold\n{report.END_MARKER}\n\nAfter.\n"
    spliced = report.splice(page, "new results")
    assert (
        spliced
        == f"# Title\n\nBefore.\n\n{report.START_MARKER}\nnew results\n{report.END_MARKER}\n\nAfter.\n"
    )
    with pytest.raises(report.MarkersMissing):
        report.splice("# no markers\n", "x")


def sample_result() -> BenchResult:
    run = IngestRun(
        300,
        700,
        100.0,
        embedding_seconds=90.0,
        startup_seconds=20.0,
        rss_after_load_bytes=2**29,
        peak_rss_bytes=2**30,
    )
    ingest = IngestResult(documents=300, planned_chunks=700, raw_rates=[8.0, 7.0, 9.0], runs_1x=[run, run])
    on_torch = IngestRun(300, 700, 250.0, 240.0, 20.0, 2**29, 2**30)
    ingest.torch_runs_1x = [on_torch, on_torch]
    ingest.concept_rates = [450.0, 180.0, 420.0]
    ingest.runs_10x = [IngestRun(3000, 7000, 1000.0, 850.0, 20.0, 2**29, 2**30)] * 2
    size = SearchSize(chunks=100_000, queries=2, build=BuildTimes(real_chunks=7000, copied_chunks=93_000))
    size.latencies = {
        "embed": [10.0, 12.0],
        "vector_leg": [5.0, 6.0],
        "fulltext_leg": [20.0, 30.0],
        "graph_leg": [1.0, 1.0],
        "service": [40.0, 50.0],
        "mcp": [50.0, 60.0],
        "mcp_streamed": [52.0, 64.0],
    }
    result = BenchResult(mode="full", started="2026-11-22 03:00 UTC", finished="2026-11-22 03:30 UTC")
    result.ingest, result.search = ingest, [size]
    result.machine = {"CPU": "Example"}
    return result


def test_the_report_states_ratios_and_verdicts_against_the_targets() -> None:
    result = sample_result()
    assert result.ingest is not None
    assert result.ingest.ratio == pytest.approx(7.0 / 8.0)
    assert result.ingest.rss_ratio == 1.0
    (size,) = result.search
    assert size.mcp_overhead == pytest.approx((55.0 - 45.0) / 45.0)
    assert size.overhead("mcp_streamed") == pytest.approx((58.0 - 45.0) / 45.0)
    # 40 - max(10 + 5, 20) and 50 - max(12 + 6, 30): the full-text leg runs beside the other two.
    assert size.rest_p50 == pytest.approx(20.0)
    assert size.dominant_leg() == "fulltext_leg"
    markdown = report.render(result)
    assert "| end to end / raw | | 0.88 | ≥ 0.8: met |" in markdown
    # 7.0 chunks/s against 700 / 250 s = 2.8 chunks/s on torch.
    assert result.ingest.speedup == pytest.approx(2.5)
    assert "| end to end on torch, chunks/s | 2.8, 2.8 | 2.8 | |" in markdown
    assert "| end to end / end to end on torch | | 2.50 | ≥ 2.5: met |" in markdown
    assert "busy (`embed_batch`), same process | 0.90, 0.90 | 0.90 | |" in markdown
    assert (
        "| concept extraction alone (`extract_concepts`), chunks per CPU second | 450, 180, 420 | 420 "
        "| ≥ 200: met |" in markdown
    )
    assert "p50 55.0 ms (≤ 40: **missed**)" in markdown
    assert "MCP + HTTP overhead 22.2 % (≤ 25 %: met)" in markdown
    assert "| MCP + HTTP overhead, JSON answer: (MCP p50 − service p50) / service p50 | 22.2 % |" in markdown
    assert (
        "| MCP + HTTP overhead, streamed answer: (MCP p50 − service p50) / service p50 | 28.9 % |" in markdown
    )
    assert "| CPU | Example |" in markdown


def test_the_million_report_gives_targets_recall_build_phases_and_sizes() -> None:
    (size,) = sample_result().search
    build = BuildTimes(
        real_chunks=7000,
        copied_chunks=993_000,
        rows_seconds=60.0,
        index_seconds={"chunk_embedding_hnsw_384": 900.0},
    )
    size = SearchSize(
        chunks=1_000_000, queries=2, build=build, latencies={**size.latencies, "mcp": [30.0, 90.0]}
    )
    million = MillionResult(
        size=size,
        recall_k=20,
        recalls=[1.0, 0.9],
        distance_ratios=[1.0, 1.01, 1.2],
        ef_search={100: (0.95, 3.0), 40: (0.9, 2.0)},
        first_build=(16, 64),
        first_ef_search={100: (0.5, 1.0), 1000: (0.7, 5.0)},
        near_copies=(64, 400),
        near_copies_ef_search=1000,
        rebuild_seconds=1500.0,
        relation_bytes={"library_chunk": 3 * 2**30, "chunk_embedding_hnsw_384": 2**31},
        database_bytes=20 * 2**30,
        shared_buffers="6GB",
        index_build_memory="6GB",
    )
    result = BenchResult(mode="full", started="s", finished="f", million=million)
    markdown = report.render(result)
    assert million.recall == pytest.approx(0.95)
    assert "MCP p50 60.0 ms (≤ 40: **missed**), p95 87.0 ms (≤ 80: **missed**)" in markdown
    assert "recall@20 against an exact scan 0.950 over 2 queries (≥ 0.95: met, lowest query 0.90;" in markdown
    assert "exact 20th's: median 1.010, worst 1.200)" in markdown
    assert "full-text leg (BM25) p50 25.0 ms, p95 29.5 ms" in markdown
    assert "rebuilt for near-copies (m 64, ef_construction 400, 1,500.0 s" in markdown
    assert "with hnsw.ef_search 1000." in markdown
    # Recall by ef_search on the index as first built and as rebuilt, side by side; a value one of
    # them was not measured at is a dash.
    assert (
        "| hnsw.ef_search | m 16, ef_construction 64: recall@20 | vector leg, mean ms "
        "| m 64, ef_construction 400: recall@20 | vector leg, mean ms |" in markdown
    )
    assert (
        "| 40 | — | — | 0.900 | 2.0 |\n| 100 | 0.500 | 1.0 | 0.950 | 3.0 |\n| 1000 | 0.700 | 5.0 | — | — |"
        in markdown
    )
    assert "indexes built after loading 900.0 s (maintenance_work_mem 6GB)" in markdown
    # Largest first; an index says how long its build took.
    assert (
        "| library_chunk | 3,072 MiB | — |\n"
        "| chunk_embedding_hnsw_384 | 2,048 MiB | 900.0 s (m 16), rebuilt (m 64) in 1,500.0 s |" in markdown
    )
    assert "| whole database | 20,480 MiB | — |" in markdown
    # Run again on a kept data directory whose index already had the parameters: nothing rebuilt.
    million.first_build, million.rebuild_seconds = (64, 400), 0.0
    markdown = report.render(result)
    assert "(m 64, ef_construction 400, already so built in the kept data directory)" in markdown
    assert "| chunk_embedding_hnsw_384 | 2,048 MiB | 900.0 s |" in markdown


def test_the_load_report_gives_rates_percentiles_the_cpu_ceiling_and_the_outage() -> None:
    from benchmarks.load_results import CpuPerSearch, LoadResult, LoadRun, MixedLoad, OutageRun, section

    one = LoadRun("50 clients, 1 worker(s)", 1, 50, 10.0, latencies_ms=[100.0] * 300, errors=0)
    two = LoadRun("50 clients, 2 worker(s)", 2, 50, 10.0, latencies_ms=[80.0] * 450, errors=1)
    mixed = MixedLoad(writers=5, searchers=20, seconds=10.0, alone_ms=[200.0], write_ms=[400.0, 600.0])
    mixed.write_server_ms = [300.0, 300.0]
    mixed.search = LoadRun("20 searchers beside 5 writers, 2 workers", 2, 20, 10.0, latencies_ms=[90.0])
    outage = OutageRun(
        down_seconds=30, clients=10, answers_while_down=600, unavailable_503=590, tool_errors=10
    )
    outage.recovery_seconds, outage.log_lines_not_access = 0.25, 3
    int8 = LoadRun("50 clients, 1 worker(s), int8 queries", 1, 50, 10.0, latencies_ms=[90.0] * 360)
    int8.query_backend = "onnx-int8"
    over = LoadRun(
        "200 clients, 1 worker(s)", 1, 200, 10.0, latencies_ms=[900.0] * 600, shed_ms=[40.0, 60.0, 500.0]
    )
    over.admitted = "32 calls at once, 64 queued"
    load = LoadResult(
        chunks=100_000, seconds=10.0, runs=[one, two, int8], mixed=mixed, outage=outage, overload=over
    )
    load.cpu = CpuPerSearch(calls=200, server_ms=15.0, postgres_ms=5.0, wall_ms=30.0)
    load.cpu_int8 = CpuPerSearch(calls=200, server_ms=11.0, postgres_ms=5.0, wall_ms=26.0)
    text = "\n".join(section(load))
    assert "int8 queries against float: 1.20× the calls/s." in text
    assert "(200 in a row, queries on the int8 graph): 11.0 ms of server CPU" in text
    assert "| 50 clients, 1 worker(s) | 30.0 | 100 | 100 | 100 | 0 |" in text
    assert "| 50 clients, 2 worker(s) | 45.0 | 80 | 80 | 80 | 1 |" in text
    assert "2 workers against 1: 1.50× the calls/s." in text
    assert "~100 calls/s at that cost" in text  # 2 cores / 20 ms
    assert "p50 500 ms" in text and "60 % of a write's time is inside the tool call" in text
    assert "600 answers while it was down (20.0 a second): 590 HTTP 503" in text
    assert "0.25 s after the restart" in text and "logged 3 warning or error lines" in text
    assert (
        "Overload (200 clients, 1 worker, a connection each; the worker takes 32 calls at once, 64 queued)"
        in text
    )
    assert "60.0 calls/s answered, p50 900 ms" in text
    assert "3 calls shed (HTTP 503 busy" in text and "told in p50 60 ms, slowest 500 ms; 0 errors" in text
