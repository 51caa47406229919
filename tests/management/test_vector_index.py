"""manage.py rebuild_vector_index: another HNSW graph built beside the current one while searches and
writes go on, swapped in at once; clear refusals; the progress of a long build."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction

from mnemosyne.embedding import Embedder
from mnemosyne.library import vector_indexes
from mnemosyne.library.vector_models import index_name
from mnemosyne.search import legs
from tests.conftest import ingest_fixture_docs

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

DIMENSIONS = 384
PROJECT = vector_indexes.BuildParameters(16, 64)


@pytest.fixture(autouse=True)
def _project_index_afterwards() -> Iterator[None]:
    """The schema outlives a test's data: put the project's index back for the tests after these."""
    yield
    vector_indexes.rebuild(DIMENSIONS, PROJECT, memory="64MB")
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {index_name(DIMENSIONS)}_rebuild")


def command(*args: str) -> str:
    out = StringIO()
    call_command("rebuild_vector_index", *args, stdout=out)
    return out.getvalue()


def hnsw_indexes() -> dict[str, tuple[bool, str]]:
    """Every HNSW index on the chunks: name → (valid, definition)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid, pg_get_indexdef(c.oid) FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam "
            "WHERE i.indrelid = 'library_chunk'::regclass AND a.amname = 'hnsw'"
        )
        return {name: (valid, definition) for name, valid, definition in cursor.fetchall()}


def ours(indexes: dict[str, tuple[bool, str]]) -> dict[str, tuple[bool, str]]:
    """The 384-dimension index and anything built beside it (not other tests' dimensions)."""
    return {name: index for name, index in indexes.items() if name.startswith(index_name(DIMENSIONS))}


def nearest(embedder: Embedder, query: str) -> list[int]:
    return [chunk_id for chunk_id, _ in legs.vector_leg(embedder.embed_query(query), legs.Filters(), 5)]


def test_without_parameters_it_says_what_each_index_was_built_with() -> None:
    # Other tests' libraries of other dimensions may have left their indexes: one line each.
    lines = command().splitlines()
    assert "384 dimensions: m 16, ef_construction 64" in lines
    assert len(lines) == len(vector_indexes.indexed_dimensions())


def test_a_rebuild_swaps_in_the_denser_graph_and_searches_find_the_same(embedder: Embedder) -> None:
    ingest_fixture_docs(embedder)
    before = nearest(embedder, "how do I restore a backup")
    assert before

    out = command("--m", "24", "--ef-construction", "96", "--memory", "64MB", "--dimensions", "384")

    assert "384 dimensions: building with m 24, ef_construction 96 beside the current index" in out
    assert "384 dimensions: rebuilt and in use" in out
    assert vector_indexes.parameters(DIMENSIONS) == vector_indexes.BuildParameters(24, 96)
    # One index under the usual name, valid, partial on the dimension as before; nothing left over.
    ((name, (valid, definition)),) = ours(hnsw_indexes()).items()
    assert (name, valid) == (index_name(DIMENSIONS), True)
    assert "m='24'" in definition and "ef_construction='96'" in definition
    assert "WHERE (vector_dims(embedding) = 384)" in definition
    assert nearest(embedder, "how do I restore a backup") == before
    # Asked again: nothing to do.
    assert "384 dimensions: already built with these parameters" in command(
        "--m", "24", "--ef-construction", "96", "--dimensions", "384"
    )


def test_the_build_waits_for_running_writes_reports_progress_and_never_stops_searches(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_fixture_docs(embedder)
    monkeypatch.setattr(vector_indexes, "PROGRESS_SECONDS", 0.05)
    lines: list[str] = []
    failures: list[BaseException] = []

    def build() -> None:
        try:
            vector_indexes.rebuild(
                DIMENSIONS, vector_indexes.BuildParameters(8, 32), memory="64MB", on_progress=lines.append
            )
        except BaseException as exc:
            failures.append(exc)
        finally:
            connection.close()

    builder = threading.Thread(target=build)
    with transaction.atomic():
        # A write in progress (as an ingest's batch holds): a concurrent build waits for it.
        with connection.cursor() as cursor:
            cursor.execute("LOCK TABLE library_chunk IN ROW EXCLUSIVE MODE")
        builder.start()
        deadline = time.monotonic() + 30
        while len(lines) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lines[0] == "building with m 8, ef_construction 32 beside the current index"
        assert lines[1].startswith("waiting for writers before build")
        # Searches go on meanwhile, on the index being replaced.
        assert nearest(embedder, "how do I restore a backup")
    builder.join(timeout=60)
    assert not builder.is_alive() and not failures
    assert vector_indexes.parameters(DIMENSIONS) == vector_indexes.BuildParameters(8, 32)


def test_an_interrupted_build_is_dropped_by_the_next_one() -> None:
    with connection.cursor() as cursor:
        # What a build killed half-way leaves: an index under the building name.
        cursor.execute(f"CREATE INDEX {index_name(DIMENSIONS)}_rebuild ON library_chunk (id)")
    command("--m", "12", "--ef-construction", "48", "--dimensions", "384")
    assert set(ours(hnsw_indexes())) == {index_name(DIMENSIONS)}
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s)", [f"{index_name(DIMENSIONS)}_rebuild"])
        assert cursor.fetchone() == (None,)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--m", "1", "--ef-construction", "64"), "m must be between 2 and 100, not 1"),
        (("--m", "40", "--ef-construction", "64"), "ef_construction must be between 80 (at least twice m)"),
        (("--m", "16", "--ef-construction", "2000"), "ef_construction must be between 32"),
        (("--m", "16"), "give both --m and --ef-construction"),
        (("--m", "16", "--ef-construction", "64", "--memory", "lots"), "memory must be a size such as"),
        (("--dimensions", "999"), "no HNSW index for vectors of 999 dimensions"),
        # A size PostgreSQL refuses: its reason, and the index left as it was.
        (
            ("--m", "20", "--ef-construction", "64", "--memory", "1kB"),
            "the build failed (1 kB is outside the valid range for parameter",
        ),
    ],
)
def test_bad_requests_are_refused_in_one_line_and_change_nothing(args: tuple[str, ...], message: str) -> None:
    with pytest.raises(CommandError, match=re.escape(message)):
        command(*args)
    assert vector_indexes.parameters(DIMENSIONS) == PROJECT


def test_progress_lines_say_what_is_known() -> None:
    line = vector_indexes.progress_line
    assert line("building index: loading tuples", 64_310, 193_711, 412_000, 0) == (
        "building index: loading tuples, 33 % of the table read, 412,000 vectors"
    )
    assert line("index validation: scanning index", 0, 0, 10, 40) == (
        "index validation: scanning index, 10 of 40 vectors"
    )
    assert line("waiting for writers before build", 0, 0, 0, 0) == "waiting for writers before build"
