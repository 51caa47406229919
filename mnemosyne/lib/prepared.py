"""Statements every search runs, prepared once per database connection.

Django binds parameters on the client and PostgreSQL parses and plans each statement anew (Django
turns psycopg's automatic preparation off, for poolers in transaction mode). The full-text leg's
statement alone takes about half a millisecond to plan, more than the rest of its work on a small
library; a search's few fixed statements together about 0.9 ms of the database's CPU.

`cursor(alias)` is Django's cursor (its error translation, its execute wrappers, its debug log)
over a psycopg cursor that binds on the server and prepares what it runs: PostgreSQL keeps the
statement for the connection's life, and after five custom plans it reuses a generic one when that
is not dearer (plan_cache_mode). For statements whose plan shape their text fixes — not for the
vector leg, whose plan depends on how many chunks its filters leave: `cursor(alias, prepare=False)`
binds on the server without preparing, so that its query vector travels in pgvector's binary form
(library/vector_models.query_vector). Parameters then travel typed: a text value is sent as
`unknown` (the statement casts it), integers as the smallest integer type.

Sessions behind a pooler in transaction mode cannot keep prepared statements; operations.md asks
for session pooling, and `DATABASE_PREPARED_STATEMENTS=false` turns this off.
"""

from __future__ import annotations

from typing import Any, cast

import psycopg
from django.conf import settings
from django.db import connections
from django.db.backends.utils import CursorWrapper

# Django turns psycopg's preparation off on its connections (a threshold of None, which refuses
# even statements that ask); with a threshold no statement reaches, only those that ask are
# prepared. Django's own cursors bind on the client and never are.
_ONLY_WHEN_ASKED = 2**31 - 1


class _Preparing(psycopg.Cursor[Any]):
    def execute(
        self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: bool | None = None
    ) -> Any:
        return super().execute(query, params, prepare=True if prepare is None else prepare, binary=binary)


def cursor(alias: str, *, prepare: bool = True) -> CursorWrapper:
    """A cursor on `alias` that binds on the server and prepares what it runs (Django's ordinary
    one when turned off). Without `prepare`, its statements are planned each time, for their
    values — the vector leg's — and their parameters still travel apart from their text, typed."""
    connection = connections[alias]
    if not settings.DATABASE_PREPARED_STATEMENTS:
        return connection.cursor()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    database = cast(psycopg.Connection[Any], connection.connection)
    if database.prepare_threshold is None:
        database.prepare_threshold = _ONLY_WHEN_ASKED
    # Django's stubs type the argument as its own wrapper; it is the database's cursor.
    raw: Any = _Preparing(database) if prepare else psycopg.Cursor(database)
    if connection.queries_logged:
        return connection.make_debug_cursor(raw)
    return connection.make_cursor(raw)
