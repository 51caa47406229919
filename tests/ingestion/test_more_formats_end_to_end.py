"""The real files of tests/fixtures/formats through ingest and search: each answers a question
about itself in the first three hits, cited by its section (slide, sheet, chapter, symbol). The
files are ingested once for the module (tests/conftest.committed_for_the_module)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.chunk_reads import chunk_text
from mnemosyne.library.models import Chunk, ChunkKind, Item
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.search.service import SearchRequest, search
from tests.conftest import committed_for_the_module

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "formats"


@pytest.fixture(scope="module")
def libraries(
    django_db_setup: None,
    django_db_blocker: Any,
    shared_data_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
    embedder: Embedder,
) -> Iterator[dict[str, str]]:
    with committed_for_the_module(django_db_blocker, shared_data_dir):
        yield _ingested(tmp_path_factory.mktemp("formats"), embedder)


def _ingested(tmp_path: Path, embedder: Embedder) -> dict[str, str]:
    docs = tmp_path / "docs"
    shutil.copytree(FIXTURES, docs)
    (docs / "README.md").unlink()
    handbook = ensure_library(name="Handbook", library_type="documentation")
    summary = ingest_paths(
        [docs],
        collection=ensure_collection(library=handbook, name="all"),
        report=lambda _: None,
        embedder=embedder,
    )
    # textwrap.py is code: not taken into a documentation library.
    assert summary.counts()["created"] == 6, [(r.source, r.error) for r in summary.results]
    assert not Item.objects.filter(source__endswith="textwrap.py").exists()
    code = ensure_library(name="Stdlib", library_type="code")
    summary = ingest_paths(
        [FIXTURES / "textwrap.py"],
        collection=ensure_collection(library=code, name="src"),
        report=lambda _: None,
        embedder=embedder,
    )
    assert summary.counts()["created"] == 1
    return {"handbook": handbook.uid, "code": code.uid}


QUESTIONS = [
    ("Which user do NFS servers use for ids they cannot map?", "debian-ids.pptx", "Slide 4: The nobody user"),
    ("When was Ubuntu Warty Warthog released?", "ubuntu-releases.xlsx", "Sheet: ubuntu"),
    ("Debian Wheezy release date", "debian-releases.csv", ""),
    ("Why does the daemon user exist on Debian?", "users-and-groups.epub", "Chapter 2. Users and Groups"),
    ("How are binary data handled by the email package?", "email-architecture.rst", "Handling Binary Data"),
    ("How do I set up a Jetty base directory?", "jetty-readme.adoc", "Quick Setup"),
]


@pytest.mark.parametrize(("query", "source", "section"), QUESTIONS, ids=[q[1] for q in QUESTIONS])
def test_each_format_answers_a_question_about_itself(
    libraries: dict[str, str], embedder: Embedder, query: str, source: str, section: str
) -> None:
    hits = search(
        SearchRequest(query=query, library_uid=libraries["handbook"], limit=3), embedder=embedder
    ).hits
    found = [hit.chunk for hit in hits if hit.chunk.item.source.endswith(source)]
    assert found, [(hit.chunk.item.source, hit.chunk.section_path) for hit in hits]
    assert section in found[0].section_path


def test_code_is_found_by_what_it_does_and_cited_by_its_symbol(
    libraries: dict[str, str], embedder: Embedder
) -> None:
    hits = search(
        SearchRequest(
            query="collapse whitespace and truncate text to fit a width",
            library_uid=libraries["code"],
            limit=3,
        ),
        embedder=embedder,
    ).hits
    assert "shorten" in [hit.chunk.section_path for hit in hits]
    paths = set(
        Chunk.objects.filter(item__source__endswith="textwrap.py").values_list("section_path", flat=True)
    )
    assert {"TextWrapper", "wrap", "dedent"} <= paths
    assert any(path.startswith("TextWrapper › _") for path in paths), paths


def test_a_long_table_is_cut_between_rows_with_its_header_repeated(
    tmp_path: Path, embedder: Embedder
) -> None:
    rows = ["id,name,city,notes"] + [
        f"{n},Person {n},City {n % 17},Ordered item number {n} twice" for n in range(400)
    ]
    (tmp_path / "people.csv").write_text("\n".join(rows))
    collection = ensure_collection(library=ensure_library(name="Tables"), name="csv")
    ingest_paths([tmp_path / "people.csv"], collection=collection, report=lambda _: None, embedder=embedder)
    chunks = Chunk.objects.filter(item__collection=collection, kind=ChunkKind.TEXT).order_by("ordinal")
    texts = [chunk_text(chunk) for chunk in chunks]
    assert len(texts) > 3
    assert all("| id | name | city | notes |\n| --- | --- | --- | --- |" in text for text in texts)
