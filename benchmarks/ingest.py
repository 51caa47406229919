"""Ingest throughput end to end versus the raw embedding throughput of the same model, and peak RSS.

Raw and end-to-end runs alternate (raw, e2e, e2e on torch, raw, e2e, e2e on torch, raw) on the 1x
corpus so that the machine's noise falls on all three; each end-to-end run starts from an empty
index. The runs on torch (EMBEDDING_DOCUMENT_BACKEND=torch, the document encoder before int8) are
what the default's end to end is compared with. The 10x corpus runs twice
for peak RSS (a peak is the maximum of a noisy series, so one run of each size would compare two
draws); the last run stays in the database as the real part of the search benchmark's index.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

from benchmarks import corpus, database
from benchmarks.results import IngestResult, IngestRun
from mnemosyne.embedding import Embedder
from mnemosyne.graph.concepts import extract_concepts
from mnemosyne.ingestion import pipeline
from mnemosyne.ingestion.inputs import InputFile, discover
from mnemosyne.ingestion.parsing import parse_bytes
from mnemosyne.ingestion.planning import PlannedChunk
from mnemosyne.library.models import Collection

ROOT = Path(__file__).resolve().parent.parent
INGEST_LIBRARY = "bench-ingest"
SEARCH_LIBRARY = "bench-search"
REAL_COLLECTION = "scifact"
RAW_RUNS = 3
RUNS_10X = 2
ON_TORCH = {"EMBEDDING_DOCUMENT_BACKEND": "torch"}

Log = Callable[[str], None]


def planned_chunks(directory: Path, embedder: Embedder) -> list[list[PlannedChunk]]:
    """Per document, its chunks, planned exactly as the pipeline plans them."""
    per_document = []
    for entry in discover([directory], {".md"}):
        if not isinstance(entry, InputFile):
            continue
        parsed = parse_bytes(entry.path.read_bytes(), filename=entry.path.name)
        # Planned by the pipeline's own function, so the raw runs embed the chunks ingest writes.
        chunks = pipeline.chunks_of(parsed, embedder)
        per_document.append(chunks)
    return per_document


def concept_extraction_rate(chunks: list[PlannedChunk]) -> float:
    """Chunks per CPU second of the concept graph's extraction alone, over the chunks ingest writes
    (their text, as ingestion/services.py extracts from it)."""
    inputs = [chunk.span.text for chunk in chunks]
    extract_concepts(inputs[0])  # its caches warm
    started = time.process_time()
    for text in inputs:
        extract_concepts(text)
    return len(inputs) / (time.process_time() - started)


def raw_embedding_rate(per_document: list[list[str]], embedder: Embedder) -> float:
    """Chunks/s of embed_batch alone, batched as the pipeline batches (whole documents, ≥ 128 chunks)."""
    inputs = [text for texts in per_document for text in texts]
    batches = corpus.pipeline_batches([len(texts) for texts in per_document], pipeline.EMBED_BATCH_CHUNKS)
    started = time.perf_counter()
    for start, end in batches:
        embedder.embed_batch(inputs[start:end])
    return len(inputs) / (time.perf_counter() - started)


def child_environment(overrides: dict[str, str] | None = None) -> dict[str, str]:
    """The parent's environment, pointed at the benchmark's database and data directory."""
    return {
        **os.environ,
        **(overrides or {}),
        "DJANGO_SETTINGS_MODULE": "mnemosyne.project.settings",
        "DATABASE_URL": database.database_url(),
        "MNEMOSYNE_DATA_DIR": str(settings.MNEMOSYNE_DATA_DIR),
    }


def run_ingest_child(
    directory: Path, *, library: str, collection: str, environment: dict[str, str] | None = None
) -> IngestRun:
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks._ingest_child", str(directory), library, collection],
        cwd=ROOT,
        env=child_environment(environment),
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"the ingest child failed ({completed.returncode}):\n{completed.stderr[-4000:]}")
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    return IngestRun(
        documents=int(report["documents"]),
        chunks=int(report["chunks"]),
        seconds=float(report["seconds"]),
        embedding_seconds=float(report["embedding_seconds"]),
        startup_seconds=float(report["startup_seconds"]),
        rss_after_load_bytes=int(report["rss_after_load_bytes"]),
        peak_rss_bytes=int(report["peak_rss_bytes"]),
        rss_quarters_bytes=tuple(int(rss) for rss in report["rss_quarters_bytes"]),
    )


def ingest_search_corpus(directory: Path, log: Log) -> IngestRun:
    """An empty index, then the 10x corpus ingested as the search benchmark's real chunks."""
    database.reset()
    run = run_ingest_child(directory, library=SEARCH_LIBRARY, collection=REAL_COLLECTION)
    log(
        f"ingest 10×: {run.documents} documents, {run.chunks} chunks in {run.seconds:.1f} s "
        f"({run.chunks_per_second:.1f} chunks/s, {100 * run.embedding_share:.0f} % embedding), "
        f"peak RSS {run.peak_rss_bytes / 2**20:.0f} MiB"
    )
    return run


def real_collection(corpus_10x: Path, log: Log) -> Collection:
    """The search benchmark's real chunks: the ingest part's, or the 10x corpus ingested now."""
    found = Collection.objects.filter(library__name=SEARCH_LIBRARY, name=REAL_COLLECTION).first()
    if found is not None:
        return found
    ingest_search_corpus(corpus_10x, log)
    return Collection.objects.get(library__name=SEARCH_LIBRARY, name=REAL_COLLECTION)


def run(*, corpus_1x: Path, corpus_10x: Path, embedder: Embedder, log: Log) -> IngestResult:
    planned_documents = planned_chunks(corpus_1x, embedder)
    per_document = [[chunk.embedding_input for chunk in chunks] for chunks in planned_documents]
    planned = sum(len(texts) for texts in per_document)
    result = IngestResult(documents=len(per_document), planned_chunks=planned)
    log(f"ingest 1×: {len(per_document)} documents plan to {planned} chunks")
    embedder.embed_batch(["warm up"])
    for round_number in range(RAW_RUNS):
        rate = raw_embedding_rate(per_document, embedder)
        result.raw_rates.append(rate)
        log(f"raw embedding {round_number + 1}/{RAW_RUNS}: {rate:.1f} chunks/s")
        concepts = concept_extraction_rate([chunk for chunks in planned_documents for chunk in chunks])
        result.concept_rates.append(concepts)
        log(f"concept extraction {round_number + 1}/{RAW_RUNS}: {concepts:.0f} chunks a CPU second")
        if round_number == RAW_RUNS - 1:
            break
        database.reset()
        e2e = run_ingest_child(corpus_1x, library=INGEST_LIBRARY, collection=f"run-{round_number + 1}")
        if e2e.chunks != planned:
            log(f"warning: the pipeline wrote {e2e.chunks} chunks, the plan has {planned}")
        result.runs_1x.append(e2e)
        log(
            f"end to end {round_number + 1}/{RAW_RUNS - 1}: {e2e.chunks_per_second:.1f} chunks/s "
            f"({e2e.chunks} chunks in {e2e.seconds:.1f} s, "
            f"{100 * e2e.embedding_share:.0f} % of it embedding; "
            f"start-up {e2e.startup_seconds:.1f} s), "
            f"peak RSS {e2e.peak_rss_bytes / 2**20:.0f} MiB"
        )
        database.reset()
        on_torch = run_ingest_child(
            corpus_1x, library=INGEST_LIBRARY, collection=f"torch-{round_number + 1}", environment=ON_TORCH
        )
        result.torch_runs_1x.append(on_torch)
        log(
            f"end to end on torch {round_number + 1}/{RAW_RUNS - 1}: "
            f"{on_torch.chunks_per_second:.1f} chunks/s "
            f"({on_torch.chunks} chunks in {on_torch.seconds:.1f} s)"
        )
    result.runs_10x = [ingest_search_corpus(corpus_10x, log) for _ in range(RUNS_10X)]
    return result
