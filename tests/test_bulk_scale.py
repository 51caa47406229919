"""The benchmark's bulk build (rows by COPY, indexes dropped and built after) against the real database."""

from __future__ import annotations

import pytest
from django.db import connection

from benchmarks import database, million, scale
from mnemosyne.embedding import Embedder
from mnemosyne.library.models import Chunk, Posting
from mnemosyne.search import legs
from mnemosyne.storage import get_chunk_store
from tests.conftest import ingest_fixture_docs

pytestmark = pytest.mark.django_db


def _index_definitions() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = ANY(%s)",
            [list(scale.INDEXED_TABLES)],
        )
        return dict(cursor.fetchall())


# Committed as the benchmark commits (VACUUM cannot run in the test's transaction).
@pytest.mark.django_db(transaction=True)
def test_a_bulk_build_copies_rows_in_and_builds_the_same_indexes_after(embedder: Embedder) -> None:
    _, collection, _ = ingest_fixture_docs(embedder)
    real = Chunk.objects.filter(collection=collection).count()
    before = _index_definitions()
    assert any("hnsw" in definition for definition in before.values())
    logged: list[str] = []

    build = scale.grow_to(real * 3, real=collection, seed=7, log=logged.append, bulk=True)

    assert build is not None and build.copied_chunks == real * 2
    assert Chunk.objects.count() == real * 3
    # Every index is back, as it was defined, and each build was timed.
    assert _index_definitions() == before
    dropped = {
        name for name, definition in before.items() if "UNIQUE" not in definition and "pkey" not in name
    }
    assert set(build.index_seconds) == dropped
    assert any(line.startswith("  built ") for line in logged)
    # Copies are whole chunks: an id, their item, text in the store, postings, a vector.
    copy = Chunk.objects.exclude(collection=collection).select_related("item").first()
    assert copy is not None and copy.item.collection_id == copy.collection_id
    assert get_chunk_store().get(copy.storage_key).decode()
    assert Posting.objects.filter(chunk_id=copy.pk).exists()
    assert copy.embedding is not None and len(copy.embedding) == 384
    found = legs.fulltext_leg(copy.text_preview[:200], legs.Filters(), 50)
    assert copy.pk in {chunk_id for chunk_id, _ in found}


def test_recall_compares_the_hnsw_leg_with_an_exact_scan(embedder: Embedder) -> None:
    ingest_fixture_docs(embedder)
    vectors = [embedder.embed_query(query) for query in ("install the server", "tokens and scopes")]
    # A few dozen chunks: the HNSW graph finds every exact neighbour.
    exact = million.exact_neighbours(vectors, 5)
    assert [len(nearest) for nearest in exact] == [5, 5]
    assert million.recalls(vectors, exact, 5) == [(1.0, pytest.approx(1.0)), (1.0, pytest.approx(1.0))]
    # Against other "exact" neighbours the share drops and the distances differ: computed, not assumed.
    swapped = million.recalls(vectors, [exact[1], exact[0]], 5)
    assert [share for share, _ in swapped] != [1.0, 1.0]
    assert [ratio for _, ratio in swapped] != pytest.approx([1.0, 1.0])


def test_sizes_name_each_table_and_its_indexes(embedder: Embedder) -> None:
    ingest_fixture_docs(embedder)
    sizes = database.relation_sizes(("library_chunk", "library_posting"))
    assert sizes["library_chunk"] > 0 and sizes["library_posting"] > 0
    assert any(name.startswith("chunk_embedding_hnsw_") for name in sizes)
    assert database.database_size() > sum(sizes.values())
    # pg_prewarm reads a relation's every block: as many as its size says it has.
    blocks = database.prewarm(["library_chunk_pkey"])
    assert blocks == {"library_chunk_pkey": sizes["library_chunk_pkey"] // 8192}
