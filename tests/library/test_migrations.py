"""The schema the migrations build in PostgreSQL: pgvector, the search indexes, no missing migrations."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

pytestmark = pytest.mark.django_db


def index_definition(name: str) -> tuple[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT tablename, indexdef FROM pg_indexes WHERE indexname = %s", [name])
        rows = cursor.fetchall()
    assert len(rows) == 1, f"index {name} not found"
    return rows[0]


def test_the_vector_extension_is_installed() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        rows = cursor.fetchall()
    assert len(rows) == 1


def test_384_dimension_vectors_have_a_partial_hnsw_cosine_index() -> None:
    table, definition = index_definition("chunk_embedding_hnsw_384")
    assert table == "library_chunk"
    assert "USING hnsw (((embedding)::vector(384)) vector_cosine_ops)" in definition
    assert "m='16'" in definition
    assert "ef_construction='64'" in definition
    assert "WHERE (vector_dims(embedding) = 384)" in definition


def test_the_search_vector_has_a_gin_index() -> None:
    table, definition = index_definition("chunk_search_vector_gin")
    assert table == "library_chunk"
    assert "USING gin (search_vector)" in definition


def test_the_embedding_column_takes_any_dimension() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'library_chunk'::regclass AND attname = 'embedding'"
        )
        (column_type,) = cursor.fetchone()
    assert column_type == "vector"


def test_no_model_change_lacks_a_migration() -> None:
    out = StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=StringIO())
    except SystemExit:  # makemigrations --check exits 1 when a migration is missing
        pytest.fail(f"makemigrations --check found changes without a migration:\n{out.getvalue()}")
    assert "No changes detected" in out.getvalue()
