"""The benchmark's own database: its URL for child processes, versions, and a full reset."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from django.conf import settings
from django.db import connection

from mnemosyne.library.models import Library

BENCH_PREFIX = "bench-"
# For building indexes after a bulk load: the HNSW graph of a million 384-dimensional vectors is
# about 2 GB and builds far faster while it fits in maintenance_work_mem.
INDEX_BUILD_MEMORY = "6GB"


class ForeignData(Exception):
    """The data directory holds libraries the benchmark did not make; it will not wipe them."""


def database_url() -> str:
    """The URL of the database this process uses (as tests/conftest.py builds it)."""
    params = connection.settings_dict
    host = params["HOST"]
    if host.startswith("/"):
        return f"postgresql://{params['USER']}:@/{params['NAME']}?host={host}"
    return f"postgresql://{params['USER']}:{params['PASSWORD']}@{host}:{params['PORT']}/{params['NAME']}"


def server_versions() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        (postgres,) = cursor.fetchone() or ("unknown",)
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
        cursor.execute(
            "SELECT current_setting('shared_buffers'), pending_restart"
            " FROM pg_settings WHERE name = 'shared_buffers'"
        )
        buffers, pending = cursor.fetchone() or ("unknown", False)
    return {
        "PostgreSQL": str(postgres),
        "pgvector": str(row[0]) if row else "not installed",
        "PostgreSQL shared_buffers": f"{buffers}{' (another value is pending a restart)' if pending else ''}",
    }


def reset() -> None:
    """Empty the library, the full-text index, the concept graph and the chunk store.

    Refuses when a library not named bench-… exists: this must be the benchmark's own data directory.
    """
    foreign = list(Library.objects.exclude(name__startswith=BENCH_PREFIX).values_list("name", flat=True)[:3])
    if foreign:
        raise ForeignData(
            f"{settings.MNEMOSYNE_DATA_DIR} holds libraries the benchmark did not create "
            f"({', '.join(foreign)}); use a data directory of its own (--data-dir)"
        )
    with connection.cursor() as cursor:
        # The TRUNCATE triggers zero the corpus statistics and drop the concept edges.
        cursor.execute(
            "TRUNCATE library_library, library_collection, library_item, library_chunk, library_posting,"
            " library_term, graph_mention, graph_edge, graph_concept RESTART IDENTITY CASCADE"
        )
    shutil.rmtree(settings.MNEMOSYNE_DATA_DIR / "chunks" / "items", ignore_errors=True)


def vacuum_analyze() -> None:
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


@contextmanager
def indexes_built_after(
    tables: Sequence[str], seconds: dict[str, float], log: Callable[[str], None]
) -> Iterator[None]:
    """Drop the tables' secondary indexes (not primary keys, nor those behind a constraint), run the
    body, then build each again from its own definition; `seconds` gets each build's time."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
            FROM pg_index i
            WHERE i.indrelid = ANY(%s::regclass[]) AND NOT i.indisprimary
              AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
            ORDER BY 1
            """,
            [list(tables)],
        )
        definitions = cursor.fetchall()
        for name, _ in definitions:
            cursor.execute(f'DROP INDEX "{name}"')
    names = ", ".join(name for name, _ in definitions)
    log(f"  dropped {len(definitions)} indexes until the rows are in: {names}")
    try:
        yield
    finally:
        _build(definitions, seconds, log)


def _build(definitions: list[tuple[str, str]], seconds: dict[str, float], log: Callable[[str], None]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"SET maintenance_work_mem = '{INDEX_BUILD_MEMORY}'")
        # The leader builds too: one worker more per further core.
        cursor.execute(f"SET max_parallel_maintenance_workers = {max((os.cpu_count() or 1) - 1, 0)}")
        for name, definition in definitions:
            started = time.perf_counter()
            cursor.execute(definition)
            seconds[name] = time.perf_counter() - started
            log(f"  built {name} in {seconds[name]:.0f} s")
        cursor.execute("RESET maintenance_work_mem")
        cursor.execute("RESET max_parallel_maintenance_workers")


def relation_sizes(tables: Sequence[str]) -> dict[str, int]:
    """Bytes on disk of each table (heap and TOAST) and of each of its indexes."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT t::regclass::text, pg_table_size(t::regclass) FROM unnest(%s::text[]) AS t
            UNION ALL
            SELECT i.indexrelid::regclass::text, pg_relation_size(i.indexrelid)
            FROM pg_index i WHERE i.indrelid = ANY(%s::regclass[])
            """,
            [list(tables), list(tables)],
        )
        return {name: int(size) for name, size in cursor.fetchall()}


def database_size() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        (size,) = cursor.fetchone() or (0,)
    return int(size)


def prewarm(relations: Sequence[str]) -> dict[str, int]:
    """Read each relation into shared buffers (pg_prewarm), in order; blocks read per relation."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        blocks = {}
        for relation in relations:
            cursor.execute("SELECT pg_prewarm(%s::regclass, 'buffer')", [relation])
            (blocks[relation],) = cursor.fetchone() or (0,)
    return blocks
