"""The concept graph: written to PostgreSQL, read from the configured GraphStore (GRAPH_BACKEND).

Writes (`record_chunk_concepts`, `forget_chunks`) always go to the PostgreSQL tables, in the
caller's transaction: PostgreSQL is the source of truth. With GRAPH_BACKEND=neo4j, Neo4j is a
projection of them, fed after commit (projection.py); reads (`get_graph_store()`) go to Neo4j then.

This package is also the Django app "graph" (models.py), so nothing here imports models at
import time: the backends are imported when first asked for.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import cast

from django.conf import settings
from django.db import transaction

from mnemosyne.graph.base import (
    ChunkConcepts,
    ConceptCount,
    GraphError,
    GraphStore,
    GraphUnavailable,
    Neighbour,
)
from mnemosyne.lib import outages

__all__ = [
    "ChunkConcepts",
    "ConceptCount",
    "GraphError",
    "GraphStore",
    "GraphUnavailable",
    "Neighbour",
    "close_graph_store",
    "forget_chunks",
    "get_graph_store",
    "record_chunk_concepts",
]

_stores: dict[str, GraphStore] = {}
_lock = threading.Lock()


def get_graph_store() -> GraphStore:
    """One store per backend per process (the Neo4j driver holds a connection pool)."""
    backend = settings.GRAPH_BACKEND
    with _lock:
        if backend not in _stores:
            # Failures and recoveries are logged once per outage (mnemosyne.lib.outages).
            watched = outages.Watched(_open(backend), outages.Dependency.GRAPH, (GraphError,))
            _stores[backend] = cast(GraphStore, watched)
        return _stores[backend]


def close_graph_store() -> None:
    """Close every store opened (the ASGI lifespan calls this at shutdown)."""
    with _lock:
        stores = list(_stores.values())
        _stores.clear()
    for store in stores:
        store.close()


def record_chunk_concepts(mentions: Sequence[ChunkConcepts]) -> None:
    """Record what each chunk mentions, replacing what it mentioned before (see GraphStore)."""
    from mnemosyne.graph.postgres import PostgresGraphStore

    with transaction.atomic():
        PostgresGraphStore().record_chunk_concepts(mentions)
        _project_after_commit([entry.chunk_id for entry in mentions])


def forget_chunks(chunk_ids: Sequence[int]) -> None:
    """Drop the chunks' mentions (before the chunks themselves are deleted)."""
    from mnemosyne.graph.postgres import PostgresGraphStore

    with transaction.atomic():
        PostgresGraphStore().forget_chunks(chunk_ids)
        _project_after_commit(chunk_ids)


def _project_after_commit(chunk_ids: Sequence[int]) -> None:
    if settings.GRAPH_BACKEND == "neo4j":
        from mnemosyne.graph import projection

        projection.enqueue(chunk_ids, get_graph_store())


def _open(backend: str) -> GraphStore:
    if backend == "neo4j":
        from mnemosyne.graph.neo4j import Neo4jGraphStore, Neo4jSettings

        return Neo4jGraphStore(Neo4jSettings.from_settings())
    from mnemosyne.graph.postgres import PostgresGraphStore

    return PostgresGraphStore()
