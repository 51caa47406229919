"""The benchmark's own database: its URL for child processes, versions, and a full reset."""

from __future__ import annotations

import shutil

from django.conf import settings
from django.db import connection

from mnemosyne.library.models import Library

BENCH_PREFIX = "bench-"


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
