"""The vector leg's query is one the partial HNSW index of its dimension can answer."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.db import connection, transaction
from pgvector import Vector

from mnemosyne.embedding import Embedder
from mnemosyne.lib import prepared
from mnemosyne.library.models import Item
from mnemosyne.search import document_legs, legs
from tests.conftest import ingest_fixture_docs

pytestmark = pytest.mark.django_db


def test_the_vector_leg_is_answered_by_the_index_of_its_dimension(embedder: Embedder) -> None:
    library, _, _ = ingest_fixture_docs(embedder)
    vector = embedder.embed_query("glaciers carve valleys")
    sent: list[tuple[str, Any]] = []

    def record(execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        if "<=>" in sql:
            sent.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        found = legs.vector_leg(vector, legs.Filters(library_id=library.pk), 5)
    assert found and len(sent) == 1
    sql, params = sent[0]
    # The statement as the leg sends it: bound on the server, the vector in binary.
    with transaction.atomic(), prepared.cursor(connection.alias, prepare=False) as cursor:
        # Statistics of the chunks just written, as autovacuum keeps them (left stale, the planner
        # takes the library to hold one chunk and reads it by library id).
        cursor.execute("ANALYZE library_chunk")
        cursor.execute("SET LOCAL enable_seqscan = off")  # usable, whatever the table's size
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "chunk_embedding_hnsw_384" in plan, plan


def test_the_query_vector_travels_in_binary_and_answers_as_its_text_form(
    embedder: Embedder, settings: Any
) -> None:
    """Bound on the server, the vector is pgvector's binary form; with the server's binding turned
    off (DATABASE_PREPARED_STATEMENTS=false) its text form, naming the same float32 values: the
    same chunks at the same distances either way."""
    library, _, _ = ingest_fixture_docs(embedder)
    vector = embedder.embed_query("glaciers carve valleys")
    sent: list[Any] = []

    def record(execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        if "<=>" in sql:
            sent.append(params["vector"])
        return execute(sql, params, many, context)

    items = list(Item.objects.filter(collection__library=library).values_list("id", flat=True))
    found = {}
    for binding in (False, True, True):
        settings.DATABASE_PREPARED_STATEMENTS = binding
        with connection.execute_wrapper(record):
            found[binding] = (
                legs.vector_leg(vector, legs.Filters(library_id=library.pk), 5),
                # The named documents' vector leg (document_legs.py) sends its vector the same way.
                document_legs.vector_in(vector, items, 5, include_images=True),
            )
    assert all(found[False]) and found[True] == found[False]
    assert [type(value) for value in sent] == [str, str] + [Vector] * 4
    as_float32 = np.asarray(vector, dtype=np.float32).tolist()
    assert all(value.to_list() == as_float32 for value in sent[2:])
