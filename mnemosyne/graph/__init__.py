"""The configured GraphStore (GRAPH_BACKEND): tables in PostgreSQL by default, or Neo4j.

This package is also the Django app "graph" (models.py), so nothing here imports models at
import time: the backends are imported when first asked for.
"""

from __future__ import annotations

import threading

from django.conf import settings

from mnemosyne.graph.base import (
    ChunkConcepts,
    ConceptCount,
    GraphError,
    GraphStore,
    GraphUnavailable,
    Neighbour,
)

__all__ = [
    "ChunkConcepts",
    "ConceptCount",
    "GraphError",
    "GraphStore",
    "GraphUnavailable",
    "Neighbour",
    "close_graph_store",
    "get_graph_store",
]

_stores: dict[str, GraphStore] = {}
_lock = threading.Lock()


def get_graph_store() -> GraphStore:
    """One store per backend per process (the Neo4j driver holds a connection pool)."""
    backend = settings.GRAPH_BACKEND
    with _lock:
        if backend not in _stores:
            _stores[backend] = _open(backend)
        return _stores[backend]


def close_graph_store() -> None:
    """Close every store opened (the ASGI lifespan calls this at shutdown)."""
    with _lock:
        stores = list(_stores.values())
        _stores.clear()
    for store in stores:
        store.close()


def _open(backend: str) -> GraphStore:
    if backend == "neo4j":
        from mnemosyne.graph.neo4j import Neo4jGraphStore, Neo4jSettings

        return Neo4jGraphStore(Neo4jSettings.from_env())
    from mnemosyne.graph.postgres import PostgresGraphStore

    return PostgresGraphStore()
