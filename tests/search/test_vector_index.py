"""The vector leg's query is one the partial HNSW index of its dimension can answer."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction

from mnemosyne.embedding import Embedder
from mnemosyne.search import legs
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
    with transaction.atomic(), connection.cursor() as cursor:
        # Statistics of the chunks just written, as autovacuum keeps them (left stale, the planner
        # takes the library to hold one chunk and reads it by library id).
        cursor.execute("ANALYZE library_chunk")
        cursor.execute("SET LOCAL enable_seqscan = off")  # usable, whatever the table's size
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "chunk_embedding_hnsw_384" in plan, plan
