"""The real files of tests/fixtures/formats (written by LibreOffice, Debian, CPython, Jetty),
ingested, and one question about each: where its file ranks in the search results, and the chunk
that answers — its section (slide, sheet, chapter, symbol) and uid, i.e. its citation."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks.documents_results import FormatAnswer

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "formats"
QUESTIONS = (
    ("debian-ids.pptx", "Which user do NFS servers use for ids they cannot map?"),
    ("ubuntu-releases.xlsx", "When was Ubuntu Warty Warthog released?"),
    ("debian-releases.csv", "Debian Wheezy release date"),
    ("users-and-groups.epub", "Why does the daemon user exist on Debian?"),
    ("email-architecture.rst", "How are binary data handled by the email package?"),
    ("jetty-readme.adoc", "How do I set up a Jetty base directory?"),
    ("textwrap.py", "collapse whitespace and truncate text to fit a width"),
)


def run(log: Callable[[str], None]) -> list[FormatAnswer]:
    from benchmarks.database import BENCH_PREFIX
    from mnemosyne.embedding import get_embedder
    from mnemosyne.ingestion.runner import ingest_paths
    from mnemosyne.library.services import ensure_collection, ensure_library
    from mnemosyne.search.service import SearchRequest, search

    embedder = get_embedder()
    docs = ensure_library(name=f"{BENCH_PREFIX}formats", library_type="documentation")
    code = ensure_library(name=f"{BENCH_PREFIX}formats-code", library_type="code")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "formats"
        shutil.copytree(FIXTURES, folder)
        (folder / "README.md").unlink()
        log("formats: ingesting the real samples")
        ingest_paths([folder], collection=ensure_collection(library=docs, name="all"), report=lambda _: None)
        ingest_paths(
            [folder / "textwrap.py"],
            collection=ensure_collection(library=code, name="src"),
            report=lambda _: None,
        )
    answers = []
    for filename, question in QUESTIONS:
        library = code if filename.endswith(".py") else docs
        hits = search(
            SearchRequest(query=question, library_uid=library.uid, limit=10), embedder=embedder
        ).hits
        rank = next((i for i, hit in enumerate(hits, 1) if hit.chunk.item.source.endswith(filename)), None)
        best = hits[rank - 1].chunk if rank else None
        answers.append(
            FormatAnswer(
                filename=filename,
                item_type=best.item.item_type if best else "",
                question=question,
                rank=rank,
                section=best.section_path if best else "",
                chunk_uid=best.uid if best else "",
                preview=" ".join((best.text_preview if best else "").split())[:90],
            )
        )
    return answers
