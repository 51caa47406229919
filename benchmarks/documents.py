"""Real documents read right: Debian's PDF manuals ingested, their chunks inspected, questions asked.

The manuals come from Debian's packages: those installed under /usr/share/doc, the rest fetched
with `apt-get download` and unpacked (`dpkg -x`) into the benchmark's data directory, never
committed. For each manual it records: chunks under 50 characters, chunks holding a ligature
character, chunks with run-together words (a token of more than 25 letters), and, for manuals
without bookmarks, chunks without a section. Then it asks the questions of
benchmarks/data/manual_questions.json (questions in other words than the manuals', each with the
page that answers it) over all the manuals together and scores success@3: an answering page among
the pages cited by the first three hits from that manual's item.

Runs in the tree it is given: `python -m benchmarks.documents --data-dir DIR --out FILE.json`
measures whatever code is checked out there (the benchmark compares two checkouts that way).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.documents_results import DocumentsResult, ManualStats, StageTimes

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = Path(__file__).resolve().parent / "data" / "manual_questions.json"
LIBRARY = "bench-documents"

# (file name, Debian package, path inside it; .gz is unpacked). Installed copies are used first.
SOURCES = (
    ("libtasn1.pdf", "libtasn1-doc", "usr/share/doc/libtasn1-doc/libtasn1.pdf"),
    (
        "shared-mime-info-spec.pdf",
        "shared-mime-info",
        "usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf",
    ),
    ("manual.pdf", "bzip2", "usr/share/doc/bzip2/manual.pdf.gz"),
    ("crc-doc.1.0.pdf", "zlib1g-dev", "usr/share/doc/zlib1g-dev/crc-doc.1.0.pdf.gz"),
    ("fontconfig-user.pdf", "fontconfig", "usr/share/doc/fontconfig/fontconfig-user.pdf.gz"),
    ("libidn2.pdf", "libidn2-doc", "usr/share/doc/libidn2-doc/libidn2.pdf"),
    ("nettle.pdf", "nettle-dev", "usr/share/doc/nettle-dev/nettle.pdf.gz"),
)
_LIGATURE = re.compile("[\ufb00-\ufb06]")
_RUN_TOGETHER = re.compile(r"[^\W\d_]{26,}")

Log = Callable[[str], None]
# Rounds of the stage timing; the median of each stage is reported.
ROUNDS = 3


def fetch_manuals(target: Path, log: Log) -> list[Path]:
    """The manuals as files in `target`: copied from /usr/share/doc, or downloaded and unpacked.

    A manual that can be neither (no apt-get on this machine, no network) is left out, and said so.
    """
    target.mkdir(parents=True, exist_ok=True)
    found = []
    for name, package, inner in SOURCES:
        destination = target / name
        if not destination.exists():
            source = Path("/") / inner
            if not source.exists():
                try:
                    source = _from_package(package, inner, target / "debs", log)
                except (OSError, subprocess.CalledProcessError, IndexError) as exc:
                    log(f"left out {name}: cannot fetch Debian's {package} ({exc})")
                    continue
            opener = gzip.open if source.suffix == ".gz" else open
            with opener(source, "rb") as reader, destination.open("wb") as writer:
                shutil.copyfileobj(reader, writer)
        found.append(destination)
    return found


def _from_package(package: str, inner: str, scratch: Path, log: Log) -> Path:
    scratch.mkdir(parents=True, exist_ok=True)
    log(f"fetching {package} with apt-get download")
    subprocess.run(["apt-get", "download", package], cwd=scratch, check=True, capture_output=True)
    deb = sorted(scratch.glob(f"{package}_*.deb"))[-1]
    unpacked = scratch / package
    subprocess.run(["dpkg", "-x", str(deb), str(unpacked)], check=True)
    return unpacked / inner


def measure(manuals: list[Path], log: Log) -> DocumentsResult:
    """Ingest the manuals into an empty library, then inspect their chunks and ask the questions."""
    import pypdfium2 as pdfium

    from benchmarks import database
    from mnemosyne.embedding import get_embedder
    from mnemosyne.ingestion.runner import ingest_paths
    from mnemosyne.library.chunk_reads import chunk_text
    from mnemosyne.library.models import Chunk
    from mnemosyne.library.services import ensure_collection, ensure_library

    commit = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    result = DocumentsResult(commit=commit)
    database.reset()
    embedder = get_embedder()
    collection = ensure_collection(library=ensure_library(name=LIBRARY), name="manuals")
    with tempfile.TemporaryDirectory(prefix="mnemosyne-manuals-") as scratch:
        folder = Path(scratch) / "manuals"
        folder.mkdir()
        for path in manuals:
            shutil.copy(path, folder / path.name)
        log(f"ingesting {len(manuals)} manuals")
        started = time.perf_counter()
        summary = ingest_paths([folder], collection=collection, report=lambda line: None, embedder=embedder)
        result.ingest_seconds = time.perf_counter() - started
    result.ingest_chunks = sum(r.chunk_count for r in summary.results)
    result.stages = time_stages(manuals, embedder, log)
    for path in manuals:
        document = pdfium.PdfDocument(str(path))
        stats = ManualStats(
            name=path.name, pages=len(document), bookmarks=next(iter(document.get_toc()), None) is not None
        )
        document.close()
        chunks = Chunk.objects.filter(item__collection=collection, item__source__endswith=f"/{path.name}")
        for chunk in chunks.filter(kind="text"):
            text = chunk_text(chunk)
            stats.chunks += 1
            stats.under_50_chars += len(text.strip()) < 50
            stats.with_ligature += bool(_LIGATURE.search(text))
            stats.run_together += bool(_RUN_TOGETHER.search(text))
            stats.without_section += not stats.bookmarks and not chunk.section_path
        result.manuals.append(stats)
    _ask(result, collection.library.uid, log)
    return result


def time_stages(manuals: list[Path], embedder: Any, log: Log) -> StageTimes:
    """Each stage of ingest on its own, side by side in one process: parsing (text, layout, tables),
    chunking, embedding. Works on the checkout before the layout analysis too."""
    import inspect
    import statistics

    from django.conf import settings

    from mnemosyne.ingestion.parsing import parse_bytes
    from mnemosyne.ingestion.planning import plan_chunks

    bounds: dict[str, Any] = {
        "max_tokens": settings.CHUNK_MAX_TOKENS,
        "overlap_tokens": settings.CHUNK_OVERLAP_TOKENS,
    }
    if "section_tokens" in inspect.signature(plan_chunks).parameters:  # not before the layout analysis
        bounds["section_tokens"] = settings.CHUNK_SECTION_TOKENS
    files = [(path.name, path.read_bytes()) for path in manuals]
    rounds: list[tuple[float, float, float]] = []
    chunks = 0
    for number in range(ROUNDS):
        log(f"timing the stages, round {number + 1} of {ROUNDS}")
        started = time.perf_counter()
        parsed = [parse_bytes(data, filename=name) for name, data in files]
        parsed_at = time.perf_counter()
        planned = [
            chunk
            for document in parsed
            for chunk in plan_chunks(document, count_tokens=embedder.count_tokens, **bounds)
        ]
        planned_at = time.perf_counter()
        embedder.embed_batch([chunk.embedding_input for chunk in planned])
        embedded_at = time.perf_counter()
        rounds.append((parsed_at - started, planned_at - parsed_at, embedded_at - planned_at))
        chunks = len(planned)
    parse, chunk, embed = (statistics.median(stage) for stage in zip(*rounds, strict=True))
    return StageTimes(parse=parse, chunk=chunk, embed=embed, chunks=chunks)


def _ask(result: DocumentsResult, library_uid: str, log: Log) -> None:
    from mnemosyne.search.service import SearchRequest, search

    present = {manual.name for manual in result.manuals}
    questions = [q for q in json.loads(QUESTIONS.read_text())["questions"] if q["pdf"] in present]
    log(f"asking {len(questions)} questions")
    for question in questions:
        hits = search(SearchRequest(query=question["question"], library_uid=library_uid, limit=3)).hits
        cited: set[int] = set()
        for hit in hits:
            chunk = hit.chunk
            if not chunk.item.source.endswith("/" + question["pdf"]) or chunk.page is None:
                continue
            last = getattr(chunk, "page_end", None) or chunk.page
            cited.update(range(chunk.page, last + 1))
        result.questions += 1
        if cited & set(question["pages"]):
            result.found_at_3 += 1
        else:
            result.misses.append(f"{question['pdf']} p.{question['pages']}: {question['question']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.documents")
    parser.add_argument("--data-dir", type=Path, default=Path(".mnemosyne-bench-documents"))
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks.environment import configure_django, log

    data_dir = args.data_dir.resolve()
    configure_django(data_dir)
    manuals = fetch_manuals(data_dir / "manuals", log)
    result = measure(manuals, log)
    payload = asdict(result) | {"success_at_3": result.success_at_3}
    if result.stages is not None:
        payload["stages"]["layout_share"] = result.stages.layout_share
    args.out.write_text(json.dumps(payload, indent=2))
    log(f"success@3 {result.found_at_3}/{result.questions}; written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
