"""Neo4j as a projection of the PostgreSQL graph, fed after commit through an outbox.

PostgreSQL is the source of truth: every write of mentions goes to its tables, in the writer's
transaction. With GRAPH_BACKEND=neo4j the same transaction also records which chunks changed
(`graph_outbox`); after commit those rows are drained: each chunk's Neo4j nodes are set to what
PostgreSQL holds for it then (its mentions replaced, or the chunk forgotten when it has none).
So a rolled-back write never reaches Neo4j, a drain that fails (Neo4j down) leaves its rows for
the next one, and applying a row twice changes nothing. `manage.py rebuild_graph` re-records every
chunk, and so re-projects them all: the repair.

Draining happens after every commit that wrote rows, in the process that committed, and takes
every pending row (other writers' included, a failed drain's too); rows are claimed with
SKIP LOCKED, so concurrent drainers share the work.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Protocol

from django.db import connection, transaction

from mnemosyne.graph.base import ChunkConcepts, GraphError

logger = logging.getLogger(__name__)

DRAIN_BATCH = 500
# A projection that is down is logged once per this many seconds, not once per commit.
OUTAGE_LOG_SECONDS = 60.0


class Projection(Protocol):
    def record_chunk_concepts(self, mentions: Sequence[ChunkConcepts]) -> None: ...

    def forget_chunks(self, chunk_ids: Sequence[int]) -> None: ...


def enqueue(chunk_ids: Sequence[int], projection: Projection) -> None:
    """Record, in the current transaction, that these chunks must be re-projected; drain after commit."""
    if not chunk_ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO graph_outbox (chunk_id, created_at) SELECT unnest(%s::bigint[]), now()",
            [sorted(set(chunk_ids))],
        )
    transaction.on_commit(lambda: drain_quietly(projection))


def drain(projection: Projection, *, batch: int = DRAIN_BATCH) -> int:
    """Project every pending change; returns how many outbox rows were applied.

    Each batch is claimed, projected and deleted in one transaction: if the projection fails the
    rows stay for the next drain.
    """
    from mnemosyne.graph.postgres import PostgresGraphStore

    source = PostgresGraphStore()
    applied = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT id, chunk_id FROM graph_outbox ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED", [batch]
            )
            rows = cursor.fetchall()
            if not rows:
                return applied
            chunk_ids = sorted({chunk_id for _, chunk_id in rows})
            current = source.mentions_of(chunk_ids)
            mentioned = {entry.chunk_id for entry in current}
            projection.forget_chunks([chunk_id for chunk_id in chunk_ids if chunk_id not in mentioned])
            projection.record_chunk_concepts(current)
            cursor.execute("DELETE FROM graph_outbox WHERE id = ANY(%s)", [[row_id for row_id, _ in rows]])
        applied += len(rows)


_last_outage_log = 0.0


def drain_quietly(projection: Projection) -> None:
    """Drain after a commit: the write is safe in PostgreSQL whatever happens here."""
    global _last_outage_log
    try:
        drain(projection)
    except GraphError as exc:
        now = time.monotonic()
        if now - _last_outage_log >= OUTAGE_LOG_SECONDS:
            _last_outage_log = now
            logger.warning("the graph projection is behind (%s); pending changes are kept and retried", exc)
    except Exception:
        logger.exception("draining the graph outbox failed; pending changes are kept and retried")


def pending() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM graph_outbox")
        row = cursor.fetchone()
    return int(row[0]) if row else 0
