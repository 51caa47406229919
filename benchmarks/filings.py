"""Long documents with tables: the right document and the right page, on ../shared/data/filings.

48 real PDFs (10-K and 10-Q filings, reports, guidebooks) are ingested into one library and the
374 questions of questions.jsonl are asked through MCP `search` over HTTP with the default
arguments and limit 5; a hit counts as the set's README says (a page question: the hit's item is
one of the question's documents and its page range holds an evidence page; a document question:
the hit's item is one of them). Success@1, @3 and @5 are reported for the page questions on
financial reports, the page questions on the other documents, all page questions, and the
document questions.

`python -m benchmarks --only filings` runs it as a part of `make bench`;
`python -m benchmarks.filings --data-dir DIR [--ingest] [--in-process]` on its own: with --ingest
the library is built anew (else the one in DIR is asked again); --in-process asks the search
service in this process instead of MCP (the same answers, for quick work on the ranking).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchmarks.documents_results import FilingsResult

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "filings"
LIBRARY = "bench-filings"
LIMIT = 5
# The profile the set is measured under: the one its documents are (and `--profile general`, the
# cost of not choosing one).
PROFILE = "filings"
Log = Callable[[str], None]


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    documents: tuple[str, ...]
    pages: tuple[int, ...] | None
    kind: str
    doc_type: str

    @property
    def group(self) -> str:
        if self.kind == "document":
            return "document questions (10-Q)"
        return "page: financial reports" if self.doc_type == "Financial report" else "page: other documents"


@dataclass(frozen=True)
class Cited:
    """What one hit cites: its item's file name and its pages."""

    document: str
    first_page: int | None
    last_page: int | None


@dataclass
class Outcome:
    question: Question
    rank: int | None  # 1-based rank of the first hit that counts, None: not in the top LIMIT
    cited: list[Cited] = field(default_factory=list)


def read_questions(data: Path) -> list[Question]:
    questions = []
    with (data / "questions.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            questions.append(
                Question(
                    id=row["id"],
                    text=row["question"],
                    documents=tuple(row["documents"]),
                    pages=tuple(row["pages"]) if row.get("pages") else None,
                    kind=row["kind"],
                    doc_type=row["doc_type"],
                )
            )
    return questions


def first_hit(question: Question, cited: Iterable[Cited]) -> int | None:
    """The rank (1-based) of the first hit that counts for the question."""
    for rank, hit in enumerate(cited, start=1):
        if hit.document not in question.documents:
            continue
        if question.kind == "document":
            return rank
        if hit.first_page is None or question.pages is None:
            continue
        last = hit.last_page or hit.first_page
        if any(hit.first_page <= page <= last for page in question.pages):
            return rank
    return None


GROUPS = (
    "page: financial reports",
    "page: other documents",
    "page: all",
    "document questions (10-Q)",
)


def summarise(outcomes: list[Outcome]) -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = {}
    for group in GROUPS:
        if group == "page: all":
            members = [o for o in outcomes if o.question.kind == "page"]
        else:
            members = [o for o in outcomes if o.question.group == group]
        if not members:
            continue
        row: dict[str, float] = {"questions": len(members)}
        for k in (1, 3, 5):
            row[f"success@{k}"] = sum(1 for o in members if o.rank is not None and o.rank <= k) / len(members)
        table[group] = row
    return table


def ingest(data: Path, log: Log, profile: str = PROFILE) -> tuple[str, float, int]:
    """The PDFs into a new library of `profile`; returns its uid, the seconds it took and the chunks
    written."""
    from benchmarks import database
    from mnemosyne.embedding import get_embedder
    from mnemosyne.ingestion.runner import ingest_paths
    from mnemosyne.library.services import ensure_collection, ensure_library

    database.reset()
    embedder = get_embedder()
    collection = ensure_collection(library=ensure_library(name=LIBRARY, library_type=profile), name="filings")
    log(f"ingesting {len(list((data / 'pdfs').glob('*.pdf')))} PDFs")
    started = time.perf_counter()
    summary = ingest_paths([data / "pdfs"], collection=collection, report=log, embedder=embedder)
    seconds = time.perf_counter() - started
    chunks = sum(result.chunk_count for result in summary.results)
    log(f"{summary.line()} in {seconds:.0f} s")
    return collection.library.uid, seconds, chunks


def library_uid() -> str:
    from mnemosyne.library.models import Library

    return Library.objects.get(name=LIBRARY).uid


def ask_over_mcp(questions: list[Question], log: Log) -> tuple[list[Outcome], list[float]]:
    """Each question through MCP `search` over HTTP (its default arguments, limit 5), timed."""
    from django.conf import settings

    from benchmarks.mcp_sessions import sse_payload
    from benchmarks.search import MCP_HEADERS, mcp_server
    from mnemosyne.library.models import Item

    files = {uid: Path(source).name for uid, source in Item.objects.values_list("uid", "source")}
    outcomes, seconds = [], []
    log(f"asking {len(questions)} questions over MCP")
    with (
        mcp_server(settings.MNEMOSYNE_DATA_DIR / "uvicorn-filings.log") as base,
        httpx.Client(base_url=base, headers=MCP_HEADERS, timeout=120) as client,
    ):
        for number, question in enumerate(questions, start=1):
            body = {
                "jsonrpc": "2.0",
                "id": number,
                "method": "tools/call",
                "params": {"name": "search", "arguments": {"query": question.text, "limit": LIMIT}},
            }
            started = time.perf_counter()
            response = client.post("/mcp/", content=json.dumps(body).encode())
            seconds.append(time.perf_counter() - started)
            response.raise_for_status()
            result = sse_payload(response).get("result") or {}
            if result.get("isError"):
                raise RuntimeError(f"search failed for {question.id}: {json.dumps(result)[:300]}")
            cited = [
                Cited(files[hit["item"]["uid"]], hit.get("page"), hit.get("page_end"))
                for hit in result["structuredContent"]["results"]
            ]
            outcomes.append(Outcome(question, first_hit(question, cited), cited))
    return outcomes, seconds


def ask_in_process(questions: list[Question], library: str, log: Log) -> tuple[list[Outcome], list[float]]:
    from mnemosyne.search.service import SearchRequest, search

    outcomes, seconds = [], []
    for question in questions:
        started = time.perf_counter()
        hits = search(SearchRequest(query=question.text, library_uid=library, limit=LIMIT)).hits
        seconds.append(time.perf_counter() - started)
        cited = [Cited(Path(hit.chunk.item.source).name, hit.chunk.page, hit.chunk.page_end) for hit in hits]
        outcomes.append(Outcome(question, first_hit(question, cited), cited))
    return outcomes, seconds


def format_table(table: dict[str, dict[str, float]]) -> str:
    lines = ["| questions | n | success@1 | success@3 | success@5 |", "|---|---|---|---|---|"]
    for group, row in table.items():
        lines.append(
            f"| {group} | {int(row['questions'])} | {row['success@1']:.3f} | {row['success@3']:.3f} "
            f"| {row['success@5']:.3f} |"
        )
    return "\n".join(lines)


def run(data: Path, log: Log) -> FilingsResult:
    """The benchmark part: ingest the set into an empty library, ask every question over MCP."""
    from benchmarks.machine import git_commit

    questions = read_questions(data)
    _, seconds, chunks = ingest(data, log)
    outcomes, latencies = ask_over_mcp(questions, log)
    return FilingsResult(
        commit=git_commit(ROOT),
        documents=len(list((data / "pdfs").glob("*.pdf"))),
        questions=len(questions),
        ingest_seconds=seconds,
        chunks=chunks,
        table=summarise(outcomes),
        latency_p50_ms=statistics.median(latencies) * 1000,
        latency_p95_ms=statistics.quantiles(latencies, n=20)[18] * 1000,
        misses=[
            f"{o.question.id} ({', '.join(o.question.documents[:2])}"
            f"{' p. ' + ', '.join(map(str, o.question.pages)) if o.question.pages else ''}): "
            f"{' '.join(o.question.text.split())[:140]}"
            for o in outcomes
            if o.rank is None and o.question.kind == "page" and o.question.doc_type == "Financial report"
        ],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.filings")
    parser.add_argument("--data-dir", type=Path, default=Path(".mnemosyne-bench-filings"))
    parser.add_argument("--filings", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--ingest", action="store_true", help="Build the library anew first.")
    parser.add_argument("--in-process", action="store_true", help="Ask the search service, not MCP.")
    parser.add_argument("--out", type=Path, default=None, help="Write every question's outcome here (JSON).")
    parser.add_argument("--profile", default=PROFILE, help="The library's profile (with --ingest).")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks.environment import configure_django, log

    configure_django(args.data_dir.resolve())
    questions = read_questions(args.filings)
    payload: dict[str, Any] = {}
    if args.ingest:
        _, seconds, chunks = ingest(args.filings, log, args.profile)
        payload |= {"ingest_seconds": seconds, "chunks": chunks}
    if args.in_process:
        outcomes, seconds_each = ask_in_process(questions, library_uid(), log)
    else:
        outcomes, seconds_each = ask_over_mcp(questions, log)
    table = summarise(outcomes)
    print(format_table(table))
    log(f"search p50 {statistics.median(seconds_each) * 1000:.1f} ms")
    if args.out:
        payload |= {
            "table": table,
            "outcomes": [
                {
                    "id": o.question.id,
                    "rank": o.rank,
                    "cited": [[c.document, c.first_page, c.last_page] for c in o.cited],
                }
                for o in outcomes
            ],
        }
        args.out.write_text(json.dumps(payload, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())


def section(result: FilingsResult) -> list[str]:
    """The part's results as Markdown, for docs/benchmarks.md."""
    lines = [
        f"### Long documents with tables ({result.documents} PDFs of ../shared/data/filings, "
        f"{result.questions} questions, through MCP `search`, limit 5)",
        "",
        f"Commit {result.commit}. Ingest of the set: {result.ingest_seconds:.0f} s for {result.chunks:,} "
        f"chunks ({result.chunks / result.ingest_seconds:.1f} chunks/s, OCR of its scanned pages included). "
        f"Search over MCP: p50 {result.latency_p50_ms:.1f} ms, p95 {result.latency_p95_ms:.1f} ms.",
        "",
        format_table(result.table),
        "",
    ]
    if result.misses:
        lines += ["Financial-report page questions missed:", "", *(f"- {miss}" for miss in result.misses), ""]
    return lines
