"""Ingest against the real database, model and filesystem chunk store."""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pytest_django.fixtures import Settings

from mnemosyne.embedding import Embedder
from mnemosyne.graph import concepts
from mnemosyne.ingestion import intake, runner, services
from mnemosyne.ingestion.documents import ParsedDocument
from mnemosyne.ingestion.item_context import chunk_header
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.models import Chunk, EmbeddingStatus, Item
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.storage import get_chunk_store
from mnemosyne.text.normalising import normalise_text
from tests.conftest import FIXTURES, ingest_fixture_docs

pytestmark = pytest.mark.django_db


def test_it_ingests_a_directory_and_reports_bad_files(embedder: Embedder) -> None:
    _, collection, summary = ingest_fixture_docs(embedder)

    counts = summary.counts()
    assert counts["created"] == 3
    assert counts["skipped"] == 2
    skipped = {entry.path.name: entry.reason for entry in summary.skipped}
    assert "NUL" in skipped["corrupt.txt"]
    assert "not an image" in skipped["diagram.png"]
    items = {item.source: item for item in Item.objects.filter(collection=collection)}
    assert set(items) == {"docs/backups.md", "docs/guides/scaling.md", "docs/onboarding.txt"}
    assert all(item.embedding_status == EmbeddingStatus.COMPLETE for item in items.values())
    assert items["docs/backups.md"].title == "Backups"
    assert items["docs/backups.md"].chunk_count == Chunk.objects.filter(item=items["docs/backups.md"]).count()


def test_it_keeps_full_text_in_the_chunk_store_with_exact_offsets(embedder: Embedder) -> None:
    ingest_fixture_docs(embedder)
    item = Item.objects.get(source="docs/backups.md")
    normalised = normalise_text((FIXTURES / "docs" / "backups.md").read_text())
    store = get_chunk_store()
    for chunk in Chunk.objects.filter(item=item):
        text = store.get(chunk.storage_key).decode()
        assert text == normalised[chunk.char_start : chunk.char_end]
        assert chunk.text_preview == text[:500]
        assert chunk.embedding is not None and len(chunk.embedding) == 384
        assert chunk.search_vector
    sections = list(Chunk.objects.filter(item=item).values_list("section_path", flat=True))
    assert any(path.endswith("Schedule") for path in sections)


def test_a_chunks_full_text_vector_is_written_with_its_row_not_updated_after(embedder: Embedder) -> None:
    with CaptureQueriesContext(connection) as queries:
        ingest_fixture_docs(embedder)
    # An UPDATE of the rows could not be HOT (the vector has a GIN index): a second entry in every
    # index of the table, and a dead row each.
    updates = [q["sql"] for q in queries if re.match(r'\s*UPDATE\s+"?library_chunk\b', q["sql"], re.I)]
    assert updates == []
    assert any(re.match(r'\s*INSERT INTO\s+"library_chunk"', q["sql"]) for q in queries)
    item = Item.objects.get(source="docs/backups.md")
    store = get_chunk_store()
    with connection.cursor() as cursor:
        for chunk in Chunk.objects.filter(item=item):
            # The vector is what write_search_vectors (a library's new language) makes of the
            # chunk's heading path and full text: weight A for the one, B for the other.
            header = chunk_header(item, chunk.section_path)
            body = store.get(chunk.storage_key).decode()
            cursor.execute(
                "SELECT %s::tsvector = setweight(to_tsvector('english', %s), 'A')"
                " || setweight(to_tsvector('english', %s), 'B')",
                [chunk.search_vector, header, body],
            )
            assert cursor.fetchone() == (True,)
            assert chunk.search_vector


def test_with_debug_on_a_written_batchs_statements_are_not_kept(
    embedder: Embedder, settings: Settings
) -> None:
    settings.DEBUG = True  # Django then logs every statement's SQL (a development checkout's default)
    connection.queries_log.clear()
    ingest_fixture_docs(embedder)
    assert Chunk.objects.exists()
    # The batch's INSERT of its chunks (vectors as text) was logged, then dropped once written.
    assert not [q for q in connection.queries_log if 'INSERT INTO "library_chunk"' in q["sql"]]
    assert connection.queries_log  # what came after the batch is logged as usual


def test_it_skips_unchanged_items_on_reingest_without_parsing_them(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, collection, _ = ingest_fixture_docs(embedder)
    before = dict(Chunk.objects.values_list("uid", "storage_key"))
    parsed: list[str] = []
    parse = intake.parse_bytes

    def counting_parse(data: bytes, *, filename: str) -> ParsedDocument:
        parsed.append(filename)
        return parse(data, filename=filename)

    monkeypatch.setattr(intake, "parse_bytes", counting_parse)
    monkeypatch.setattr(runner, "LOOKUP_FILES", 2)
    with CaptureQueriesContext(connection) as queries:
        summary = ingest_paths(
            [FIXTURES / "docs"], collection=collection, report=lambda line: None, embedder=embedder
        )

    assert summary.counts()["unchanged"] == 3
    assert dict(Chunk.objects.values_list("uid", "storage_key")) == before
    # Only the two files that were skipped as unreadable are read again.
    assert sorted(parsed) == ["corrupt.txt", "diagram.png"]
    # The five files' items are looked up two files at a time: three queries, not five.
    lookups = [q["sql"] for q in queries if 'FROM "library_item"' in q["sql"] and '"source" IN' in q["sql"]]
    assert len(lookups) == 3


def test_it_replaces_a_changed_items_chunks_and_deletes_old_objects(
    embedder: Embedder, tmp_path: Path
) -> None:
    docs = tmp_path / "notes"
    docs.mkdir()
    page = docs / "page.md"
    page.write_text("# Page\n\nThe first version talks about apples.\n")
    library = ensure_library(name="Notes")
    collection = ensure_collection(library=library, name="all")
    ingest_paths([docs], collection=collection, report=lambda line: None, embedder=embedder)
    old = list(Chunk.objects.filter(item__source="notes/page.md"))
    store = get_chunk_store()

    page.write_text("# Page\n\nThe second version talks about pears.\n\n## More\n\nAnd about plums too.\n")
    summary = ingest_paths([docs], collection=collection, report=lambda line: None, embedder=embedder)

    assert summary.counts()["updated"] == 1
    new = list(Chunk.objects.filter(item__source="notes/page.md"))
    assert {c.uid for c in new}.isdisjoint({c.uid for c in old})
    assert "pears" in store.get(new[0].storage_key).decode()
    for chunk in old:
        with pytest.raises(KeyError):
            store.get(chunk.storage_key)
    assert Item.objects.get(source="notes/page.md").chunk_count == len(new)


def test_a_failed_item_keeps_its_previous_chunks(embedder: Embedder, tmp_path: Path) -> None:
    docs = tmp_path / "kb"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nStable content about rivers.\n")
    (docs / "b.md").write_text("# B\n\nContent about mountains.\n")
    collection = ensure_collection(library=ensure_library(name="KB"), name="kb")
    ingest_paths([docs], collection=collection, report=lambda line: None, embedder=embedder)
    before = list(Chunk.objects.filter(item__source="kb/a.md").values_list("uid", flat=True))

    class BrokenEmbedder:
        model_id = embedder.model_id  # the same model, failing
        dim = 384
        max_tokens = 256

        def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
            raise RuntimeError("the model fell over")

        def embed_query(self, text: str, *, cached: bool = True) -> list[float]:
            raise RuntimeError("the model fell over")

        def count_tokens(self, text: str) -> int:
            return len(text.split())

        def token_starts(self, text: str) -> list[int]:
            return [match.start() for match in re.finditer(r"\S+", text)]

    (docs / "a.md").write_text("# A\n\nChanged content about lakes.\n")
    reports: list[str] = []
    summary = ingest_paths([docs], collection=collection, report=reports.append, embedder=BrokenEmbedder())

    item = Item.objects.get(source="kb/a.md")
    assert item.embedding_status == EmbeddingStatus.FAILED
    assert "the model fell over" in item.embedding_error
    assert list(Chunk.objects.filter(item=item).values_list("uid", flat=True)) == before
    # b.md is unchanged (same content, same model): only the changed a.md is embedded, and fails.
    assert summary.counts()["failed"] == 1 and summary.counts()["unchanged"] == 1
    assert any("failed kb/a.md" in line for line in reports)


def test_it_does_not_follow_symlinks_out_of_the_root(embedder: Embedder, tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n\nDo not ingest me.\n")
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(FIXTURES / "docs" / "onboarding.txt", root / "onboarding.txt")
    (root / "link.md").symlink_to(outside)
    collection = ensure_collection(library=ensure_library(name="Links"), name="c")

    summary = ingest_paths([root], collection=collection, report=lambda line: None, embedder=embedder)

    assert [r.source for r in summary.results] == ["root/onboarding.txt"]
    assert any("outside" in entry.reason for entry in summary.skipped)


def test_an_item_that_cannot_be_written_fails_alone_and_its_batch_is_written(
    embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "batch"
    docs.mkdir()
    for name, topic in (("a", "rivers"), ("b", "poison"), ("c", "mountains")):
        (docs / f"{name}.md").write_text(f"# {name.upper()}\n\nA short note about {topic}.\n")
    collection = ensure_collection(library=ensure_library(name="Batch"), name="all")

    def extract_or_fail(text: str, **kwargs: int) -> list[concepts.Concept]:
        if "poison" in text:
            raise RuntimeError("this chunk breaks the concept extractor")
        return concepts.extract_concepts(text, **kwargs)

    monkeypatch.setattr(services, "extract_concepts", extract_or_fail)
    summary = ingest_paths([docs], collection=collection, report=lambda line: None, embedder=embedder)

    # The three share one batch; its transaction fails, and each item is then written on its own.
    outcomes = {result.source: result.outcome.value for result in summary.results}
    assert outcomes == {"batch/a.md": "created", "batch/b.md": "failed", "batch/c.md": "created"}
    failed = Item.objects.get(source="batch/b.md")
    assert failed.embedding_status == EmbeddingStatus.FAILED
    assert "breaks the concept extractor" in failed.embedding_error
    assert not Chunk.objects.filter(item=failed).exists()
    for source in ("batch/a.md", "batch/c.md"):
        item = Item.objects.get(source=source)
        assert item.embedding_status == EmbeddingStatus.COMPLETE
        assert Chunk.objects.filter(item=item).count() == item.chunk_count == 1
    # What the failed item had stored is gone again.
    left = (django_settings.MNEMOSYNE_DATA_DIR / "chunks" / "items" / failed.uid).rglob("*")
    assert not [path for path in left if path.is_file()]


def test_a_new_chunking_configuration_keeps_the_current_objects_until_the_swap(
    embedder: Embedder, tmp_path: Path, settings: Settings
) -> None:
    docs = tmp_path / "config"
    docs.mkdir()
    (docs / "long.md").write_text("# Long\n\n" + " ".join(f"Sentence {n} is about tides." for n in range(60)))
    settings.CHUNK_SECTION_TOKENS = 0  # the section is cut at CHUNK_MAX_TOKENS, which changes below
    collection = ensure_collection(library=ensure_library(name="Config"), name="all")
    ingest_paths([docs], collection=collection, report=lambda line: None, embedder=embedder)
    before = list(Chunk.objects.filter(item__source="config/long.md").values_list("storage_key", flat=True))

    settings.CHUNK_MAX_TOKENS = 64
    summary = ingest_paths([docs], collection=collection, report=lambda line: None, embedder=embedder)

    assert summary.counts()["updated"] == 1
    after = list(Chunk.objects.filter(item__source="config/long.md").values_list("storage_key", flat=True))
    assert len(after) > len(before)
    # Same bytes, other configuration: new objects under a new prefix, the old ones removed after.
    assert {key.rsplit("/", 1)[0] for key in after}.isdisjoint({key.rsplit("/", 1)[0] for key in before})
    store = get_chunk_store()
    for key in before:
        with pytest.raises(KeyError):
            store.get(key)
