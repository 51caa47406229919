"""python -m benchmarks [--quick] [--only PART] [--data-dir DIR] [--scifact DIR] [--write-docs]

Measures ingest throughput against raw embedding, search latency at 10k and 100k chunks (and at a
million, bulk loaded, with HNSW recall and index sizes; HNSW recall on near-duplicate copies), load
from 50 clients, MMR diversity, real PDF manuals (chunks, questions, ingest stages) and OCR on scans
of them, on a data directory of its own (an embedded PostgreSQL and chunk store apart from
development data), prints a Markdown report, and after a full run writes it into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import mnemosyne  # noqa: F401  (Python 3.11 support for Django; must come before Django)
from benchmarks.environment import configure_django, log

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "benchmarks.md"


@dataclass(frozen=True)
class Plan:
    documents_1x: int
    documents_10x: int
    search_sizes: tuple[int, ...]
    queries: int
    warmup: int
    load_seconds: float
    outage_seconds: float
    sync_files: int
    million: bool
    # The copies part: abstracts, copies of each, queries.
    copies: tuple[int, int, int]


PARTS = (
    "ingest",
    "search",
    "diversity",
    "access",
    "console",
    "evaluation",
    "documents",
    "filings",
    "ocr",
    "load",
    "million",
    "copies",
    "sync",
    "formats",
    "peers",
)
FULL = Plan(
    documents_1x=300,
    documents_10x=3000,
    search_sizes=(10_000, 100_000),
    queries=200,
    warmup=20,
    load_seconds=60,
    outage_seconds=30,
    sync_files=2000,
    million=True,
    copies=(150, 200, 100),
)
QUICK = Plan(
    documents_1x=50,
    documents_10x=500,
    search_sizes=(10_000,),
    queries=50,
    warmup=10,
    load_seconds=10,
    outage_seconds=10,
    sync_files=200,
    million=False,
    copies=(20, 20, 20),
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[1])
    parser.add_argument(
        "--quick", action="store_true", help="Smaller corpora, 10k chunks only (a few minutes)."
    )
    parser.add_argument("--only", choices=PARTS, help="Run one of the benchmarks.")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(".mnemosyne-bench"),
        help="The benchmark's own data directory (emptied at the start of every run).",
    )
    parser.add_argument("--scifact", type=Path, default=None, help="SciFact in the BEIR layout.")
    parser.add_argument(
        "--filings",
        type=Path,
        default=None,
        help="The filings set (PDFs and questions.jsonl); default ../shared/data/filings.",
    )
    parser.add_argument(
        "--write-docs",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Write the report into docs/benchmarks.md (default: only after a full run of both parts).",
    )
    return parser.parse_args(argv)


def settings_snapshot() -> dict[str, str]:
    from django.conf import settings

    names = (
        "EMBEDDING_MODEL",
        "EMBEDDING_BATCH_SIZE",
        "EMBEDDING_QUERY_BACKEND",
        "EMBEDDING_DOCUMENT_BACKEND",
        "EMBEDDING_QUERY_THREADS",
        "EMBEDDING_QUERY_CACHE_SIZE",
        "CHUNK_MAX_TOKENS",
        "CHUNK_OVERLAP_TOKENS",
        "CHUNK_SECTION_TOKENS",
        "OCR",
        "OCR_DPI",
        "SEARCH_HNSW_EF_SEARCH",
        "SEARCH_BM25_TERM_POSTINGS",
        "SEARCH_BM25_RESCORE",
        "SEARCH_BM25_MAX_QUERY_TERMS",
        "SEARCH_FUSION",
        "SEARCH_RRF_K",
        "SEARCH_GRAPH_WEIGHT",
        "GRAPH_BACKEND",
    )
    snapshot = {name: str(getattr(settings, name)) for name in names}
    from mnemosyne.embedding import get_embedder

    # What actually embeds queries: "onnx" falls back to torch when the export does not check out.
    snapshot["query embedding backend in use"] = str(getattr(get_embedder(), "query_backend", "torch"))
    snapshot["document embedding backend in use"] = str(getattr(get_embedder(), "document_backend", "torch"))
    snapshot["rerank"] = "on" if settings.RERANK_URL or settings.RERANK_MODEL_PATH else "off"
    return snapshot


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    plan = QUICK if args.quick else FULL
    parts = [args.only] if args.only else list(PARTS)
    started = time.perf_counter()
    configure_django(args.data_dir.resolve())

    from benchmarks import corpus, database, machine, report
    from benchmarks.results import BenchResult
    from mnemosyne.embedding import get_embedder

    scifact = args.scifact or corpus.DEFAULT_SCIFACT
    result = BenchResult(mode="quick" if args.quick else "full", started=_now())
    result.machine = {
        **machine.describe(ROOT),
        **database.server_versions(),
        "load average (1/5/15 min) at start": machine.load_average(),
    }
    result.settings = settings_snapshot()
    log(f"data directory {args.data_dir.resolve()}; loading the model")
    embedder = get_embedder()
    database.reset()
    with tempfile.TemporaryDirectory(prefix="mnemosyne-bench-") as scratch:
        corpus_1x, corpus_10x = Path(scratch) / "scifact-1x", Path(scratch) / "scifact-10x"
        corpus.write_markdown_corpus(corpus.read_documents(scifact, plan.documents_1x), corpus_1x)
        corpus.write_markdown_corpus(corpus.read_documents(scifact, plan.documents_10x), corpus_10x)
        if "ingest" in parts:
            from benchmarks import ingest

            result.ingest = ingest.run(corpus_1x=corpus_1x, corpus_10x=corpus_10x, embedder=embedder, log=log)
        if "search" in parts:
            from benchmarks import search

            result.search = search.run(
                sizes=plan.search_sizes,
                queries=corpus.train_queries(scifact),
                measured=plan.queries,
                warmup=plan.warmup,
                corpus_10x=corpus_10x,
                embedder=embedder,
                log=log,
            )
        if "sync" in parts:
            from benchmarks import sync

            result.sync = sync.run(corpus.read_documents(scifact, plan.sync_files), Path(scratch), log)
        if "load" in parts:
            from benchmarks import load

            result.load = load.run(
                queries=corpus.train_queries(scifact),
                corpus_10x=corpus_10x,
                chunks=plan.search_sizes[-1],
                seconds=plan.load_seconds,
                outage_seconds=plan.outage_seconds,
                log=log,
            )
        if "console" in parts:
            from benchmarks import console

            # Before the million part grows the index tenfold: the console is timed at 100k chunks.
            result.console = console.run(corpus_10x=corpus_10x, log=log)
        if "evaluation" in parts:
            from benchmarks import evaluation

            # At 100k chunks too, before the million part grows the index.
            result.evaluation = evaluation.run(corpus_10x=corpus_10x, scifact=scifact, log=log)
        if "million" in parts and (plan.million or args.only == "million"):
            from benchmarks import million

            # After the load benchmark: it runs at 100k chunks, and this grows the same index.
            result.million = million.run(
                queries=corpus.train_queries(scifact),
                measured=plan.queries,
                warmup=plan.warmup,
                corpus_10x=corpus_10x,
                embedder=embedder,
                log=log,
            )
    if "copies" in parts:
        from benchmarks import copies

        originals, copies_each, copy_queries = plan.copies
        result.copies = copies.run(
            scifact=scifact,
            embedder=embedder,
            originals=originals,
            copies=copies_each,
            queries=copy_queries,
            log=log,
        )
    if "formats" in parts:
        from benchmarks import formats

        result.formats = formats.run(log)
    if "diversity" in parts:
        from benchmarks import diversity

        log("timing MMR diversity")
        result.diversity = diversity.run()
    if "access" in parts:
        from benchmarks import access

        result.access = access.run(log)
    if "filings" in parts:
        from benchmarks import filings

        data = args.filings or filings.DEFAULT_DATA
        if (data / "questions.jsonl").exists():
            database.reset()
            result.filings = filings.run(data, log)
        else:
            result.notes.append(f"The filings part was left out: no {data}/questions.jsonl here.")
    if "peers" in parts:
        from benchmarks import peers

        # SciFact in a library of its own, beside chroma-mcp and mcp-server-qdrant.
        database.reset()
        result.peers = peers.run(scifact, log)
    if "documents" in parts or "ocr" in parts:
        from benchmarks import documents

        # Kept between runs (the database is emptied, the manuals are not fetched again).
        manuals = documents.fetch_manuals(args.data_dir.resolve() / "manuals", log)
        if "documents" in parts:
            from benchmarks import pdf_extractors

            result.extractors = pdf_extractors.run(manuals, log)
            result.documents = documents.measure(manuals, log)
        if "ocr" in parts:
            from benchmarks import ocr

            result.ocr = ocr.run({path.name: path for path in manuals}, log)
    result.machine["load average (1/5/15 min) at end"] = machine.load_average()
    result.finished = _now()
    result.notes.append(f"Wall time of the whole run: {(time.perf_counter() - started) / 60:.1f} min.")
    markdown = report.render(result)
    print(markdown)
    write_docs = args.write_docs if args.write_docs is not None else (not args.quick and not args.only)
    if write_docs:
        report.write_into(DOCS, markdown)
        log(f"wrote the results into {DOCS}")
    return 0


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


if __name__ == "__main__":
    sys.exit(main())
