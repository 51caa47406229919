"""Search reads on streaming replicas (DATABASE_REPLICA_URLS), the primary when none will do.

Each replica is a Django database alias, `replica_0`, `replica_1`, …. Every read of a search —
its legs, the concept graph's, its pages and documents, the reading of its hits — goes to one
replica, taken in turn, that is up and no further behind the primary than
DATABASE_REPLICA_MAX_LAG_SECONDS, so one search sees one snapshot: the search runs inside
`reads_from(alias)`, whose alias raw SQL reads through `reading()` and the ORM through ReadRouter
(DATABASE_ROUTERS). Everything else (writes, tokens, the scope's resolution) stays on the primary.

A replica's lag is read from the replica itself at most once a second per process; one that is not
streaming from the primary counts as lagging (it may be any age), and so does one with WAL waiting
to be replayed that has replayed no transaction since it started. A replica that fails a search is
left alone for DATABASE_REPLICA_RETRY_SECONDS and the search is answered from the primary.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

logger = logging.getLogger(__name__)

PREFIX = "replica_"
# Seconds a lag reading stays good.
LAG_CHECK_SECONDS = 1.0

_LAG_SQL = """
    SELECT CASE
        WHEN NOT pg_is_in_recovery() THEN 0
        WHEN NOT EXISTS (SELECT FROM pg_stat_wal_receiver WHERE status = 'streaming') THEN NULL
        WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
        -- WAL waits to be replayed: behind by the time since the last transaction it replayed
        -- (none since it started: unknown, so not used).
        ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp())
    END
"""

# The database the reads of the running search go to; contextvars carry it into the threads a
# search runs its legs in (contextvars.copy_context).
_reading: ContextVar[str] = ContextVar("mnemosyne_reads_from", default=DEFAULT_DB_ALIAS)

_lock = threading.Lock()
_down_until: dict[str, float] = {}
_lag: dict[str, tuple[float, float | None]] = {}  # alias → (read at, seconds behind; None: not streaming)
_turns = itertools.count()


def aliases() -> list[str]:
    return sorted(alias for alias in settings.DATABASES if alias.startswith(PREFIX))


def read_alias() -> str:
    """The database a search reads from: the next usable replica, else the primary."""
    replicas = aliases()
    if not replicas:
        return DEFAULT_DB_ALIAS
    start = next(_turns)
    for offset in range(len(replicas)):
        alias = replicas[(start + offset) % len(replicas)]
        if _usable(alias):
            return alias
    return DEFAULT_DB_ALIAS


@contextlib.contextmanager
def reads_from(alias: str) -> Iterator[None]:
    """Every read within (raw SQL through `reading()`, the ORM through ReadRouter) goes to alias."""
    token = _reading.set(alias)
    try:
        yield
    finally:
        _reading.reset(token)


def reading() -> str:
    """The database alias reads go to here: the running search's replica, else the primary."""
    return _reading.get()


class ReadRouter:
    """Django's database router: the ORM's reads inside `reads_from` go to its alias; writes, and
    reads outside one, to the primary."""

    def db_for_read(self, model: type, **hints: Any) -> str:
        return _reading.get()

    def db_for_write(self, model: type, **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, first: Any, second: Any, **hints: Any) -> bool:
        # A replica holds the primary's rows: a row read from one may refer to a row of the other.
        return True


def _usable(alias: str) -> bool:
    now = time.monotonic()
    with _lock:
        if _down_until.get(alias, 0.0) > now:
            return False
        reading = _lag.get(alias)
    if reading is None or now - reading[0] > LAG_CHECK_SECONDS:
        try:
            with connections[alias].cursor() as cursor:
                cursor.execute(_LAG_SQL)
                row = cursor.fetchone()
        except DatabaseError as exc:
            mark_down(alias, exc)
            return False
        lag = None if row is None or row[0] is None else float(row[0])
        reading = (now, lag)
        with _lock:
            _lag[alias] = reading
    lag = reading[1]
    return lag is not None and lag <= settings.DATABASE_REPLICA_MAX_LAG_SECONDS


def mark_down(alias: str, exc: BaseException) -> None:
    """Leave a replica that failed alone for DATABASE_REPLICA_RETRY_SECONDS."""
    with _lock:
        _down_until[alias] = time.monotonic() + settings.DATABASE_REPLICA_RETRY_SECONDS
        _lag.pop(alias, None)
    logger.warning(
        "search reads leave replica %s for %d s: %s",
        alias,
        settings.DATABASE_REPLICA_RETRY_SECONDS,
        type(exc).__name__,
    )
    with contextlib.suppress(DatabaseError):
        connections[alias].close()
