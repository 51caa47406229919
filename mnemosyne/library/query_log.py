"""The query log: one row per tool call (who, over what, on which library, what was asked, how
many hits, the best score, how long, how it went), kept QUERY_LOG_DAYS days — none written when
that is 0 — and never for a library that opted out (Library.log_queries). Written by the tool-call
path after each call, read by the console's activity views, pruned by the background worker.
A row that cannot be written is logged and the call goes on: the log never fails a call."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone

from mnemosyne.library.models import Library, QueryLog

logger = logging.getLogger(__name__)

# Libraries by uid (id, logged), re-read this often: a call costs one INSERT, not a lookup.
LIBRARIES_SECONDS = 60.0
# Rows removed per statement when pruning, so a large backlog never holds a long lock.
PRUNE_BATCH = 10_000
QUERY_CHARS = 2000


@dataclass(frozen=True)
class Call:
    tool: str
    transport: str
    caller: str
    library_uid: str | None
    query: str
    hits: int | None
    top_score: float | None
    ms: float
    outcome: str
    reason: str = ""


class _Libraries:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._read_at = -LIBRARIES_SECONDS
        self._by_uid: dict[str, tuple[int, bool]] = {}

    def get(self, uid: str) -> tuple[int, bool] | None:
        with self._lock:
            if time.monotonic() - self._read_at >= LIBRARIES_SECONDS or uid not in self._by_uid:
                self._by_uid = {
                    found_uid: (pk, logged)
                    for found_uid, pk, logged in Library.objects.values_list("uid", "pk", "log_queries")
                }
                self._read_at = time.monotonic()
            return self._by_uid.get(uid)


_libraries = _Libraries()


def enabled() -> bool:
    return settings.QUERY_LOG_DAYS > 0


def record(call: Call) -> None:
    """Keep the call, unless the log is off or its library opted out; never raises."""
    if not enabled():
        return
    try:
        library = _libraries.get(call.library_uid) if call.library_uid else None
        if library is not None and not library[1]:
            return
        QueryLog.objects.create(
            at=timezone.now(),
            tool=call.tool[:64],
            transport=call.transport[:16],
            caller=call.caller[:200],
            library_id=None if library is None else library[0],
            query=call.query[:QUERY_CHARS],
            hits=call.hits,
            top_score=call.top_score,
            ms=round(call.ms, 2),
            outcome=call.outcome[:16],
            reason=call.reason[:200],
        )
    except DatabaseError:
        # The database is away: the call path reports the outage (once); the row is let go.
        return
    except Exception:
        logger.exception("a tool call could not be written to the query log")


def prune() -> int:
    """Remove the rows older than QUERY_LOG_DAYS (all of them when it is 0); returns how many."""
    cutoff = timezone.now() - timedelta(days=settings.QUERY_LOG_DAYS)
    removed = 0
    while True:
        ids = list(QueryLog.objects.filter(at__lt=cutoff).values_list("id", flat=True)[:PRUNE_BATCH])
        if not ids:
            return removed
        removed += QueryLog.objects.filter(id__in=ids).delete()[0]
