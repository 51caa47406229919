"""The query log: one row per tool call (who, over what, on which library, what was asked, how
many hits, the best score, how long, how it went), kept QUERY_LOG_DAYS days — none written when
that is 0 — and never for a library that opted out (Library.log_queries). Written by the tool-call
path after each call, read by the console's activity views, pruned by the background worker.
A row that cannot be written is logged and the call goes on: the log never fails a call.

A call's row is written by a thread of its own (_Writer), with the rows of the calls made
meanwhile, in one statement: the call's answer waits for no INSERT, and under load many calls
share one. A row written inside someone else's transaction is written there and then, as any
other, and so is every row with QUERY_LOG_BACKGROUND off (the tests: a row written after the call
answered could meet a test's teardown emptying the tables). flush() waits for the rows handed
over so far (the writer's tests, and the process's exit).

Each past day is also rolled up by the worker (roll_up: calls and errors per tool, library and
latency bucket), so the views' counts and percentiles over a month read the day rows and today's
calls, not a million rows; a percentile is then the upper edge of its latency bucket."""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from datetime import time as clock
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from mnemosyne.library.models import Library, QueryLog, QueryLogDay

logger = logging.getLogger(__name__)

# Libraries by uid (id, logged), re-read this often: a call costs one INSERT, not a lookup.
LIBRARIES_SECONDS = 60.0
# Rows removed per statement when pruning, so a large backlog never holds a long lock.
PRUNE_BATCH = 10_000
QUERY_CHARS = 2000
# The writer's rows are committed without waiting for the WAL to reach the disk (the setting is
# local to its own transaction): a database crash may lose the last calls' rows, never leave the
# log inconsistent. Inside a transaction of someone else's (whose commit the setting would reach)
# a row is written as any other.
_COLUMNS = "(at, tool, transport, caller, library_id, query, hits, top_score, ms, outcome, reason)"
_ONE = "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
_ROW = f"INSERT INTO {QueryLog._meta.db_table} {_COLUMNS} VALUES {_ONE}"
# At most this many rows a statement; at most this many waiting (beyond, a row is let go: the
# database has been away or slow that long).
WRITE_BATCH = 500
MAX_WAITING = 20_000
# The writer's thread ends (its connection closed) after this long without a row; given a row, it
# waits this long for the next calls' before it writes them all.
WRITER_IDLE_SECONDS = 30.0
WRITER_LINGER_SECONDS = 0.1
WRITER_NAME = "mnemosyne query log"
# Latency buckets (ms) of the day rows; a percentile reads as the upper edge of its bucket.
LATENCY_EDGES = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 30000)


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
        values = (
            timezone.now(),
            call.tool[:64],
            call.transport[:16],
            call.caller[:200],
            None if library is None else library[0],
            call.query[:QUERY_CHARS],
            call.hits,
            call.top_score,
            round(call.ms, 2),
            call.outcome[:16],
            call.reason[:200],
        )
        if connection.in_atomic_block:
            with connection.cursor() as cursor:
                cursor.execute(_ROW, values)
        elif not settings.QUERY_LOG_BACKGROUND:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit TO off")
                cursor.execute(_ROW, values)
        else:
            _writer.add(values)
    except DatabaseError:
        # The database is away: the call path reports the outage (once); the row is let go.
        return
    except Exception:
        logger.exception("a tool call could not be written to the query log")


class _Writer:
    """The rows of the calls, written by a thread of its own, all those waiting in one statement."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._rows: list[tuple[Any, ...]] = []
        self._writing = False
        self._flushing = 0
        self._thread: threading.Thread | None = None
        self._dropped = 0

    def add(self, values: tuple[Any, ...]) -> None:
        with self._changed:
            if len(self._rows) >= MAX_WAITING:
                self._dropped += 1
                if self._dropped == 1:
                    logger.warning("the query log is %d rows behind: rows are let go", MAX_WAITING)
                return
            self._rows.append(values)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="query-log", daemon=True)
                self._thread.start()
            elif len(self._rows) == 1:
                # The writer waits for a first row; the rows after it, it gathers by itself.
                self._changed.notify_all()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every row handed over is written (or let go); False if `timeout` passed first."""
        deadline = time.monotonic() + timeout
        with self._changed:
            self._flushing += 1
            self._changed.notify_all()  # no lingering
            try:
                while self._rows or self._writing:
                    left = deadline - time.monotonic()
                    if left <= 0 or not self._changed.wait(left):
                        return not (self._rows or self._writing)
            finally:
                self._flushing -= 1
        return True

    def _run(self) -> None:
        try:
            while True:
                with self._changed:
                    while not self._rows:
                        if not self._changed.wait(WRITER_IDLE_SECONDS) and not self._rows:
                            self._thread = None
                            return
                    if not self._flushing:
                        # The rows of the calls made meanwhile join this one's: one statement and
                        # one wake-up of this thread for them all (a flush cuts the wait short).
                        self._changed.wait(WRITER_LINGER_SECONDS)
                    batch, self._rows = self._rows[:WRITE_BATCH], self._rows[WRITE_BATCH:]
                    self._writing = True
                try:
                    _write(batch)
                finally:
                    with self._changed:
                        self._writing = False
                        self._changed.notify_all()
        finally:
            connection.close()


def _write(rows: list[tuple[Any, ...]]) -> None:
    """The rows in one INSERT, committed without waiting for the WAL to reach the disk; on a
    connection the database dropped (a restart), once more on a new one."""
    for attempt in (1, 2):
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                # Named, for whoever reads pg_stat_activity.
                cursor.execute(
                    f"SET LOCAL synchronous_commit TO off; SET application_name TO '{WRITER_NAME}'"
                )
                cursor.execute(
                    f"{_ROW}{(', ' + _ONE) * (len(rows) - 1)}",
                    [value for row in rows for value in row],
                )
            return
        except DatabaseError:
            # The next statement gets a new connection; the database still away (the calls report
            # the outage), these rows are let go.
            connection.close()
            if attempt == 2:
                return
        except Exception:
            logger.exception("%d calls could not be written to the query log", len(rows))
            return


_writer = _Writer()


def flush(timeout: float = 10.0) -> bool:
    """Wait until the calls' rows handed to the writer so far are written; False on timeout."""
    return _writer.flush(timeout)


# What the last calls left is written before the process ends.
atexit.register(flush, 5.0)


def prune() -> int:
    """Remove the rows (and day rows) older than QUERY_LOG_DAYS (all when it is 0); returns how many calls."""
    cutoff = timezone.now() - timedelta(days=settings.QUERY_LOG_DAYS)
    QueryLogDay.objects.filter(day__lt=cutoff.date()).delete()
    removed = 0
    while True:
        ids = list(QueryLog.objects.filter(at__lt=cutoff).values_list("id", flat=True)[:PRUNE_BATCH])
        if not ids:
            return removed
        removed += QueryLog.objects.filter(id__in=ids).delete()[0]


def _midnight(day: date) -> datetime:
    return datetime.combine(day, clock.min, tzinfo=timezone.get_current_timezone())


def roll_up(today: date | None = None) -> list[date]:
    """Each past day within QUERY_LOG_DAYS not rolled up yet, rolled up; returns those days."""
    today = today or timezone.localdate()
    done = set(QueryLogDay.objects.values_list("day", flat=True).distinct())
    rolled: list[date] = []
    for back in range(settings.QUERY_LOG_DAYS, 0, -1):
        day = today - timedelta(days=back)
        if day in done:
            continue
        with connection.cursor() as cursor:
            cursor.execute(
                """
                INSERT INTO library_querylogday (day, tool, library_id, bucket, calls, errors)
                SELECT %(day)s, tool, library_id, width_bucket(ms, %(edges)s::float8[]), count(*),
                       count(*) FILTER (WHERE outcome <> 'ok')
                FROM library_querylog
                WHERE at >= %(start)s AND at < %(end)s
                GROUP BY tool, library_id, width_bucket(ms, %(edges)s::float8[])
                """,
                {
                    "day": day,
                    "edges": list(LATENCY_EDGES),
                    "start": _midnight(day),
                    "end": _midnight(day + timedelta(days=1)),
                },
            )
            if cursor.rowcount:
                rolled.append(day)
    return rolled


@dataclass
class ToolLoad:
    tool: str
    calls: int = 0
    errors: int = 0
    buckets: dict[int, int] | None = None

    @property
    def p50(self) -> str:
        return self.percentile(0.5)

    @property
    def p95(self) -> str:
        return self.percentile(0.95)

    def percentile(self, share: float) -> str:
        """The latency under which `share` of the calls fell, as its bucket's upper edge."""
        counts = self.buckets or {}
        total = sum(counts.values())
        seen = 0
        for bucket in sorted(counts):
            seen += counts[bucket]
            if seen >= share * total:
                if bucket >= len(LATENCY_EDGES):
                    return f"> {LATENCY_EDGES[-1]:,}"
                return f"≤ {LATENCY_EDGES[bucket]:,}"
        return "—"


def load(
    days: int, libraries: Iterable[int] | None, today: date | None = None
) -> tuple[list[ToolLoad], list[tuple[date, int]]]:
    """Calls, errors and latency buckets per tool, and calls per day, over the last `days` days
    (today included): the day rows for the past days, today's calls counted as they are."""
    today = today or timezone.localdate()
    first = today - timedelta(days=days - 1)
    scope = Q() if libraries is None else Q(library_id__in=list(libraries))
    rows: list[tuple[date, str, int, int, int]] = list(
        QueryLogDay.objects.filter(scope, day__gte=first, day__lt=today).values_list(
            "day", "tool", "bucket", "calls", "errors"
        )
    )
    live = QueryLog.objects.filter(scope, at__gte=_midnight(today))
    sql, params = live.values("tool", "ms", "outcome").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT tool, width_bucket(ms, %s::float8[]), count(*), count(*) FILTER (WHERE outcome <> 'ok')
            FROM ({sql}) AS calls GROUP BY 1, 2
            """,
            [list(LATENCY_EDGES), *params],
        )
        rows += [(today, tool, bucket, calls, errors) for tool, bucket, calls, errors in cursor]
    tools: dict[str, ToolLoad] = {}
    per_day: dict[date, int] = defaultdict(int)
    for day, tool, bucket, calls, errors in rows:
        entry = tools.setdefault(tool, ToolLoad(tool, buckets={}))
        entry.calls += calls
        entry.errors += errors
        assert entry.buckets is not None
        entry.buckets[bucket] = entry.buckets.get(bucket, 0) + calls
        per_day[day] += calls
    ranked = sorted(tools.values(), key=lambda entry: (-entry.calls, entry.tool))
    return ranked, sorted(per_day.items())
