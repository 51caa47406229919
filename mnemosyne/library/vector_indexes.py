"""The HNSW index of each vector dimension: its build parameters, read from the index itself, and a
rebuild with other parameters beside it.

A new dimension's index is built with m 16 and ef_construction 64 (vector_models.ensure_index).
A corpus of many near-copies of each chunk finds fewer of its true nearest neighbours through that
graph (docs/benchmarks.md, "Near-duplicate copies"); a denser one (a larger m and ef_construction)
finds more, at a longer build and costlier inserts. `manage.py rebuild_vector_index` builds it
concurrently beside the current index — searches and writes go on meanwhile — and swaps the two in
one short transaction, so no search ever runs without an index.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection, transaction

from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.vector_models import index_definition, index_name

# pgvector's bounds: m from 2 to 100, ef_construction from 4 to 1000 and at least twice m.
M_RANGE = (2, 100)
EF_CONSTRUCTION_RANGE = (4, 1000)
_MEMORY = re.compile(r"[1-9][0-9]{0,6}(kB|MB|GB)")
_INDEX_NAME = re.compile(r"chunk_embedding_hnsw_([0-9]+)")
PROGRESS_SECONDS = 10.0


@dataclass(frozen=True)
class BuildParameters:
    m: int
    ef_construction: int

    def check(self) -> None:
        """InvalidArgument naming the bound a value is outside of."""
        if not M_RANGE[0] <= self.m <= M_RANGE[1]:
            raise InvalidArgument(f"m must be between {M_RANGE[0]} and {M_RANGE[1]}, not {self.m}")
        low, high = max(EF_CONSTRUCTION_RANGE[0], 2 * self.m), EF_CONSTRUCTION_RANGE[1]
        if not low <= self.ef_construction <= high:
            raise InvalidArgument(
                f"ef_construction must be between {low} (at least twice m) and {high}, "
                f"not {self.ef_construction}"
            )


def check_memory(memory: str) -> None:
    """InvalidArgument unless `memory` is a size PostgreSQL reads (512MB, 4GB)."""
    if not _MEMORY.fullmatch(memory):
        raise InvalidArgument(f"memory must be a size such as 512MB or 4GB, not {memory!r}")


def indexed_dimensions() -> list[int]:
    """The vector dimensions that have an HNSW index, smallest first."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'library_chunk' AND indexname LIKE %s",
            ["chunk_embedding_hnsw_%"],
        )
        names = [row[0] for row in cursor.fetchall()]
    return sorted(int(match[1]) for name in names if (match := _INDEX_NAME.fullmatch(name)))


def parameters(dimensions: int) -> BuildParameters | None:
    """What the dimension's index was built with; None when it has no index."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reloptions FROM pg_class WHERE relname = %s AND relkind = 'i'", [index_name(dimensions)]
        )
        row = cursor.fetchone()
    if row is None:
        return None
    options = dict(option.split("=", 1) for option in row[0] or [])
    # An index built without WITH (…) has pgvector's defaults, which are these.
    return BuildParameters(int(options.get("m", 16)), int(options.get("ef_construction", 64)))


def rebuild(
    dimensions: int,
    wanted: BuildParameters,
    *,
    memory: str,
    on_progress: Callable[[str], None] = lambda _: None,
) -> bool:
    """Rebuild the dimension's index with `wanted` (False when it already has them); `on_progress`
    hears of the start, then of the build every PROGRESS_SECONDS.

    Built concurrently beside the current one (`CREATE INDEX CONCURRENTLY`, which waits for running
    writes and blocks none), then swapped in one transaction. `memory` is the build's
    maintenance_work_mem (pgvector builds fast while the graph fits in it). Must run outside a
    transaction; an interrupted build leaves an invalid index that the next run drops first.
    """
    wanted.check()
    check_memory(memory)
    current = parameters(dimensions)
    if current is None:
        raise InvalidArgument(f"no HNSW index for vectors of {dimensions} dimensions")
    if current == wanted:
        return False
    name = index_name(dimensions)
    building = f"{name}_rebuild"
    on_progress(
        f"building with m {wanted.m}, ef_construction {wanted.ef_construction} beside the current index"
    )
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {building}")
        cursor.execute(f"SET maintenance_work_mem = '{memory}'")
        done = threading.Event()
        watcher = threading.Thread(target=_report_progress, args=(done, on_progress), daemon=True)
        watcher.start()
        try:
            cursor.execute(
                index_definition(
                    dimensions,
                    m=wanted.m,
                    ef_construction=wanted.ef_construction,
                    how="CONCURRENTLY",
                    name=building,
                )
            )
        finally:
            done.set()
            watcher.join()
            cursor.execute("RESET maintenance_work_mem")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {name}")
        cursor.execute(f"ALTER INDEX {building} RENAME TO {name}")
    return True


def _report_progress(done: threading.Event, on_progress: Callable[[str], None]) -> None:
    """Every PROGRESS_SECONDS, the build's phase and how far it is (pg_stat_progress_create_index:
    pgvector counts the table's blocks read and the vectors loaded into the graph)."""
    try:
        while not done.wait(PROGRESS_SECONDS):
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT phase, blocks_done, blocks_total, tuples_done, tuples_total "
                    "FROM pg_stat_progress_create_index WHERE relid = 'library_chunk'::regclass"
                )
                row = cursor.fetchone()
            if row is not None:
                on_progress(progress_line(*row))
    finally:
        connection.close()


def progress_line(
    phase: str, blocks_done: int, blocks_total: int, tuples_done: int, tuples_total: int
) -> str:
    """'building index: loading tuples, 42 % of the table read, 412,000 vectors' (what is known)."""
    parts = [phase]
    if blocks_total:
        parts.append(f"{100 * blocks_done // blocks_total} % of the table read")
    if tuples_total:
        parts.append(f"{tuples_done:,} of {tuples_total:,} vectors")
    elif tuples_done:
        parts.append(f"{tuples_done:,} vectors")
    return ", ".join(parts)
