"""Peers: Mnemosyne beside the MCP retrieval servers a user would pick instead, on the same machine.

SciFact's corpus goes into each: Mnemosyne's by `evaluate`'s own loader (a general-profile
library), chroma-mcp's and mcp-server-qdrant's through their own MCP tools (peer_servers.py says
how they are installed and given the same MiniLM-L6 weights). Then, through one MCP client
(mcp_sessions.py):

1. Quality: nDCG@10 over SciFact's train queries, from each server's search tool's 10 results.
   SciFact is judged by document and each peer stores a document as one point, so Mnemosyne is
   asked for documents as its users ask for them (`group_by: "item"`, ten documents); ten chunks
   hold fewer documents (nDCG@10 0.726 against 0.735 on 2026-11-28).
2. Load, in alternating rounds: each system in turn, 1 client for ONE_SECONDS, then MANY_CLIENTS
   for MANY_SECONDS, with the CPU of each system's processes (and PostgreSQL's for Mnemosyne) per
   answered call.

`python -m benchmarks --only peers` runs it as part of `make bench`;
`python -m benchmarks.peers [--data-dir DIR] [--rounds N]` on its own. The peers' virtualenvs and
model files are kept between runs in .bench-peers/ (made once per set of pins).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

import mnemosyne  # noqa: F401  (Python 3.11 support for Django; must come before Django)
from benchmarks import mcp_sessions, peer_servers
from benchmarks.peer_servers import CHROMA, QDRANT, Peer, Running
from benchmarks.peers_results import PeerRun, PeersResult, SystemFigures, section

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".bench-peers"
LIMIT = 10
ONE_SECONDS = 20.0
MANY_SECONDS = 30.0
MANY_CLIENTS = 50
ROUNDS = 2
# Documents per chroma_add_documents call; mcp-server-qdrant stores one per call, from this many clients.
CHROMA_BATCH = 100
QDRANT_LOADERS = 4
CHROMA_COLLECTION = "scifact"
Log = Callable[[str], None]


@dataclass(frozen=True)
class System:
    """One server measured: where it answers, its search call, and how to read its ranking."""

    figures: SystemFigures
    running: Running
    tool: str
    arguments: Callable[[str], dict[str, Any]]
    ranked: Callable[[dict[str, Any]], list[str]]


def _unique(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def mnemosyne_ranked(result: dict[str, Any]) -> list[str]:
    return _unique([str(hit["source"]) for hit in result.get("structuredContent", {}).get("results", [])])


def qdrant_ranked(result: dict[str, Any]) -> list[str]:
    """Its answer is one text: a JSON list of "<entry><content>…</content><metadata>…</metadata></entry>"."""
    text = "".join(part.get("text", "") for part in result.get("content", []))
    try:
        entries = json.loads(text)
    except ValueError:
        entries = [text]
    ranked = []
    for entry in (entry for entry in entries if isinstance(entry, str)):
        # The metadata is the entry's last element (a passage may itself hold the tag's text).
        start, end = entry.rfind("<metadata>"), entry.rfind("</metadata>")
        if 0 <= start < end:
            ranked.append(str(json.loads(entry[start + len("<metadata>") : end])["doc_id"]))
    return _unique(ranked)


def chroma_ranked(result: dict[str, Any]) -> list[str]:
    found = result.get("structuredContent", {}).get("result")
    if not isinstance(found, dict):
        found = json.loads(result["content"][0]["text"])
    return _unique([str(identifier) for identifier in found["ids"][0]])


def _documents(scifact: Path) -> list[tuple[str, str]]:
    """(id, text) per corpus document: the title, a blank line, the abstract."""
    documents = []
    with (scifact / "corpus.jsonl").open() as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                text = "\n\n".join(part for part in (record.get("title"), record.get("text")) if part)
                documents.append((str(record["_id"]), text))
    return documents


def _load_chroma(url: str, documents: list[tuple[str, str]], log: Log) -> float:
    started = time.perf_counter()
    session = mcp_sessions.Session(url)
    try:
        session.call("chroma_create_collection", {"collection_name": CHROMA_COLLECTION})
        for start in range(0, len(documents), CHROMA_BATCH):
            batch = documents[start : start + CHROMA_BATCH]
            session.call(
                "chroma_add_documents",
                {
                    "collection_name": CHROMA_COLLECTION,
                    "documents": [text for _, text in batch],
                    "ids": [identifier for identifier, _ in batch],
                },
            )
            if (start // CHROMA_BATCH) % 10 == 9:
                log(f"  chroma-mcp: {start + len(batch):,} / {len(documents):,} documents")
    finally:
        session.close()
    return time.perf_counter() - started


def _load_qdrant(url: str, documents: list[tuple[str, str]], log: Log) -> float:
    started = time.perf_counter()

    def store(share: list[tuple[str, str]]) -> None:
        session = mcp_sessions.Session(url)
        try:
            for identifier, text in share:
                session.call("qdrant-store", {"information": text, "metadata": {"doc_id": identifier}})
        finally:
            session.close()

    shares = [documents[n::QDRANT_LOADERS] for n in range(QDRANT_LOADERS)]
    with ThreadPoolExecutor(QDRANT_LOADERS) as pool:
        list(pool.map(store, shares))
    log(f"  mcp-server-qdrant: {len(documents):,} documents")
    return time.perf_counter() - started


def _ndcg(system: System, queries: dict[str, str], qrels: dict[str, dict[str, int]], log: Log) -> None:
    from mnemosyne.evaluation import measures

    session = mcp_sessions.Session(system.running.url)
    scores, latencies = [], []
    try:
        for query_id, judged in sorted(qrels.items()):
            started = time.perf_counter()
            result = session.call(system.tool, system.arguments(queries[query_id]))
            latencies.append((time.perf_counter() - started) * 1000)
            scores.append(measures.ndcg_at_k(system.ranked(result), judged, 10))
    finally:
        session.close()
    system.figures.ndcg_at_10 = sum(scores) / len(scores)
    system.figures.quality_queries = len(scores)
    system.figures.quality_p50_ms = measures.percentile(latencies, 0.5)
    log(f"{system.figures.name}: nDCG@10 {system.figures.ndcg_at_10:.4f} over {len(scores)} queries")


def _cpu_by_process(processes: list[psutil.Process]) -> dict[int, float]:
    seconds = {}
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue
        seconds[process.pid] = times.user + times.system
    return seconds


def _measured(system: System, queries: list[str], *, clients: int, seconds: float, number: int) -> PeerRun:
    server, database = system.running.processes, system.running.database_processes
    before = _cpu_by_process(server()), _cpu_by_process(database())
    run = asyncio.run(
        mcp_sessions.drive(
            system.running.url,
            system.tool,
            system.arguments,
            queries,
            clients=clients,
            seconds=seconds,
            label=f"{system.figures.name}, {clients} clients",
        )
    )
    # Processes that came during the run (a database backend) count from zero.
    after = _cpu_by_process(server()), _cpu_by_process(database())
    spent = [
        sum(max(0.0, used - earlier.get(pid, 0.0)) for pid, used in later.items())
        for earlier, later in zip(before, after, strict=True)
    ]
    calls = len(run.latencies_ms)
    per_call = [value * 1000 / calls if calls else float("nan") for value in spent]
    return PeerRun(
        round=number, run=run, cpu_ms_per_search=per_call[0] + per_call[1], database_ms_per_search=per_call[1]
    )


@contextmanager
def _mnemosyne(scifact: Path, log: Log) -> Iterator[System]:
    from django.conf import settings

    from benchmarks import load, search
    from mnemosyne.embedding import get_embedder
    from mnemosyne.evaluation.beir import Dataset, ensure_loaded
    from mnemosyne.storage import get_chunk_store

    dataset = Dataset(scifact)
    started = time.perf_counter()
    library, _ = ensure_loaded(dataset, embedder=get_embedder(), store=get_chunk_store())
    loaded = time.perf_counter() - started
    log(f"Mnemosyne: {dataset.corpus_size():,} documents in library {library.uid} ({loaded:.0f} s)")
    figures = SystemFigures(
        name="Mnemosyne",
        version=_commit(),
        call=f'search {{"query": …, "limit": {LIMIT}, "library_uid": …, "group_by": "item", '
        '"return_metadata": ["source"]}',
        documents=dataset.corpus_size(),
        load_seconds=loaded,
    )
    with search.mcp_server(settings.MNEMOSYNE_DATA_DIR / "peers-mnemosyne.log") as base:
        running = Running(
            "Mnemosyne", base, "/mcp/", load.server_processes(base)[0].pid, load.postgres_processes
        )
        yield System(
            figures,
            running,
            "search",
            lambda query: {
                "query": query,
                "limit": LIMIT,
                "library_uid": library.uid,
                "group_by": "item",
                "return_metadata": ["source"],
            },
            mnemosyne_ranked,
        )


@contextmanager
def _peer(
    peer: Peer, documents: list[tuple[str, str]], data_dir: Path, cache: Path, log: Log
) -> Iterator[System]:
    from django.conf import settings

    from mnemosyne.embedding import query_encoder
    from mnemosyne.embedding.sentence_transformer import (
        BUNDLED_MODEL_NAME,
        BUNDLED_MODEL_SHA256,
        bundled_model_dir,
    )

    python = peer_servers.ensure_venv(peer, cache, log)
    # The float graph Mnemosyne's queries run on, exported from the bundled weights.
    graph = query_encoder.export_path(settings.EMBEDDING_CACHE_DIR, BUNDLED_MODEL_NAME, BUNDLED_MODEL_SHA256)
    if peer is CHROMA:
        models = peer_servers.chroma_home(cache, graph, bundled_model_dir())
    else:
        models = peer_servers.fastembed_cache(cache, graph, bundled_model_dir())
    data = data_dir / "peers" / peer.name
    # Each run loads the peer afresh (its collection made anew, nothing stored twice).
    shutil.rmtree(data, ignore_errors=True)
    with peer_servers.serving(
        peer, python=python, data=data, models=models, log_path=data_dir / f"peers-{peer.name}.log"
    ) as running:
        log(f"{peer.name} {peer.version}: serving at {running.url}; loading {len(documents):,} documents")
        if peer is CHROMA:
            loaded = _load_chroma(running.url, documents, log)
            arguments: Callable[[str], dict[str, Any]] = lambda query: {  # noqa: E731
                "collection_name": CHROMA_COLLECTION,
                "query_texts": [query],
                "n_results": LIMIT,
            }
            ranked, call = (
                chroma_ranked,
                f'chroma_query_documents {{"collection_name": …, "query_texts": […], "n_results": {LIMIT}}}',
            )
        else:
            loaded = _load_qdrant(running.url, documents, log)
            arguments = lambda query: {"query": query}  # noqa: E731
            ranked, call = (
                qdrant_ranked,
                f'qdrant-find {{"query": …}} (QDRANT_SEARCH_LIMIT={LIMIT}, local mode)',
            )
        log(f"{peer.name}: loaded in {loaded:.0f} s")
        figures = SystemFigures(
            name=peer.name, version=peer.version, call=call, documents=len(documents), load_seconds=loaded
        )
        yield System(figures, running, peer.search_tool, arguments, ranked)


def _commit() -> str:
    found = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return found.stdout.strip() or "unknown"


def run(
    scifact: Path,
    log: Log,
    *,
    rounds: int = ROUNDS,
    one_seconds: float = ONE_SECONDS,
    many_seconds: float = MANY_SECONDS,
    cache: Path = CACHE,
) -> PeersResult:
    from django.conf import settings

    from mnemosyne.evaluation.beir import Dataset

    dataset = Dataset(scifact)
    queries = dataset.queries()
    qrels = {qid: judged for qid, judged in dataset.qrels("train").items() if qid in queries}
    asked = [queries[qid] for qid in sorted(qrels)]
    documents = _documents(scifact)
    data_dir = Path(settings.MNEMOSYNE_DATA_DIR)
    result = PeersResult(
        commit=_commit(),
        corpus=f"SciFact, {len(documents):,} abstracts",
        queries=len(qrels),
        rounds=rounds,
        one_seconds=one_seconds,
        many_seconds=many_seconds,
        many_clients=MANY_CLIENTS,
    )
    with ExitStack() as stack:
        systems = [
            stack.enter_context(_mnemosyne(scifact, log)),
            *(stack.enter_context(_peer(peer, documents, data_dir, cache, log)) for peer in (QDRANT, CHROMA)),
        ]
        result.systems = [system.figures for system in systems]
        for system in systems:
            _ndcg(system, queries, qrels, log)
        for number in range(1, rounds + 1):
            for system in systems:
                for clients, seconds in ((1, one_seconds), (MANY_CLIENTS, many_seconds)):
                    measured = _measured(system, asked, clients=clients, seconds=seconds, number=number)
                    system.figures.runs.append(measured)
                    log(
                        f"round {number}, {system.figures.name}, {clients} client(s): "
                        f"{measured.run.calls_per_second:.1f} calls/s, p50 {measured.run.p50:.0f} ms, "
                        f"p95 {measured.run.p95:.0f} ms, {measured.cpu_ms_per_search:.1f} ms CPU a search, "
                        f"{measured.run.errors} errors"
                    )
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers")
    parser.add_argument("--data-dir", type=Path, default=Path(".mnemosyne-bench-peers"))
    parser.add_argument("--scifact", type=Path, default=None, help="SciFact in the BEIR layout.")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--one-seconds", type=float, default=ONE_SECONDS)
    parser.add_argument("--many-seconds", type=float, default=MANY_SECONDS)
    parser.add_argument("--out", type=Path, default=None, help="Also write the section here (Markdown).")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks import corpus
    from benchmarks.environment import configure_django, log

    configure_django(args.data_dir.resolve())
    result = run(
        args.scifact or corpus.DEFAULT_SCIFACT,
        log,
        rounds=args.rounds,
        one_seconds=args.one_seconds,
        many_seconds=args.many_seconds,
    )
    text = "\n".join(section(result))
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
