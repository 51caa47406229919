"""GraphStore on Neo4j (GRAPH_BACKEND=neo4j), with the official driver. Needs Neo4j 5.6 or later.

Model: (:Chunk {id, library_id, collection_id})-[:MENTIONS {score}]->(:Concept {key, label}), and
(:Concept)-[:CO_OCCURS {weight}]->(:Concept) stored once per pair, from the smaller key to the
larger. It is a projection of the PostgreSQL graph, written only by the outbox drain
(graph.projection) after commit; connection settings are NEO4J_* in settings.py.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import neo4j
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from neo4j.exceptions import AuthError, DriverError, Neo4jError, ServiceUnavailable, SessionExpired

from mnemosyne.graph.base import (
    EXAMPLE_CHUNKS,
    ChunkConcepts,
    ConceptCount,
    GraphError,
    GraphUnavailable,
    Neighbour,
    NodeEdges,
    check_limit,
    expand_by_hops,
    mention_rows,
    merged_weights,
)
from mnemosyne.lib.scope import EVERYWHERE, Scope

T = TypeVar("T")

# Idempotent schema: unique keys (each also an index) and the filter properties.
SCHEMA = [
    "CREATE CONSTRAINT concept_key IF NOT EXISTS FOR (c:Concept) REQUIRE c.key IS UNIQUE",
    "CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.id IS UNIQUE",
    "CREATE INDEX chunk_library IF NOT EXISTS FOR (c:Chunk) ON (c.library_id)",
    "CREATE INDEX chunk_collection IF NOT EXISTS FOR (c:Chunk) ON (c.collection_id)",
]

# Take 1 off the edge of every concept pair per forgotten chunk; drop edges that reach zero.
FORGET_EDGES = """
UNWIND $ids AS id
MATCH (ch:Chunk {id: id})-[:MENTIONS]->(a:Concept), (ch)-[:MENTIONS]->(b:Concept)
WHERE a.key < b.key
WITH a, b, count(ch) AS lost
MATCH (a)-[r:CO_OCCURS]->(b)
SET r.weight = r.weight - lost
WITH r WHERE r.weight <= 0
DELETE r
"""

# Delete the chunks with their mentions.
FORGET_CHUNKS = """
UNWIND $ids AS id
MATCH (ch:Chunk {id: id})
DETACH DELETE ch
"""

# Create each chunk, its concepts (first label wins) and its scored mentions.
WRITE_MENTIONS = """
UNWIND $rows AS row
MERGE (ch:Chunk {id: row.chunk_id})
SET ch.library_id = row.library_id, ch.collection_id = row.collection_id
WITH ch, row
UNWIND row.concepts AS concept
MERGE (c:Concept {key: concept.key})
ON CREATE SET c.label = concept.label
MERGE (ch)-[m:MENTIONS]->(c)
SET m.score = concept.score
"""

# Add each pair's count of co-mentioning chunks to its edge (source key < target key).
ADD_EDGES = """
UNWIND $pairs AS pair
MATCH (a:Concept {key: pair.source}), (b:Concept {key: pair.target})
MERGE (a)-[r:CO_OCCURS]->(b)
ON CREATE SET r.weight = pair.weight
ON MATCH SET r.weight = r.weight + pair.weight
"""

# A concept's neighbours, strongest first, each with the lowest ids of chunks mentioning both.
NEIGHBOURS = """
MATCH (c:Concept {key: $key})-[r:CO_OCCURS]-(n:Concept)
WITH c, n, r.weight AS weight
ORDER BY weight DESC, n.key
LIMIT $limit
RETURN n.key AS key, n.label AS label, weight,
       COLLECT {
           MATCH (c)<-[:MENTIONS]-(ch:Chunk)-[:MENTIONS]->(n)
           RETURN ch.id AS id ORDER BY id LIMIT $examples
       } AS examples
ORDER BY weight DESC, key
"""

# The same, counting only chunks in the given libraries (the stored edge weights count them all).
NEIGHBOURS_WITHIN = """
MATCH (c:Concept {key: $key})<-[:MENTIONS]-(ch:Chunk)-[:MENTIONS]->(n:Concept)
WHERE ch.library_id IN $library_ids AND n <> c
WITH n, ch ORDER BY ch.id
WITH n, count(ch) AS weight, collect(ch.id)[..$examples] AS examples
RETURN n.key AS key, n.label AS label, weight, examples
ORDER BY weight DESC, key
LIMIT $limit
"""

# For each key: its strongest edge weight and its top `per_key` edges (neighbour key, weight).
EDGES_OF = """
UNWIND $keys AS key
MATCH (c:Concept {key: key})-[r:CO_OCCURS]-(n:Concept)
WITH c, n.key AS neighbour, r.weight AS weight
ORDER BY weight DESC, neighbour
WITH c, collect([neighbour, weight]) AS near, max(weight) AS strongest
RETURN c.key AS key, strongest, near[..$per_key] AS near
"""

# Chunks scored by the sum of concept weight * mention score, within the scope (Scope.cypher on ch).
CHUNKS_MENTIONING = """
UNWIND $weights AS w
MATCH (c:Concept {key: w.key})<-[m:MENTIONS]-(ch:Chunk)
WHERE %s
RETURN ch.id AS chunk_id, sum(w.weight * m.score) AS score
ORDER BY score DESC, chunk_id
LIMIT $limit
"""

# Concepts by how many chunks (within the scope: Scope.cypher on ch) mention them, one page.
TOP_CONCEPTS = """
MATCH (ch:Chunk)-[:MENTIONS]->(c:Concept)
WHERE %s
RETURN c.key AS key, c.label AS label, count(ch) AS mentions
ORDER BY mentions DESC, key
SKIP $offset LIMIT $limit
"""

# Which keys name a concept that some chunk mentions.
KNOWN = """
UNWIND $keys AS key
MATCH (c:Concept {key: key})
WHERE EXISTS { (c)<-[:MENTIONS]-(:Chunk) }
RETURN c.key AS key
"""


@dataclass(frozen=True)
class Neo4jSettings:
    uri: str
    user: str
    password: str
    database: str | None
    connection_timeout: float = 5.0
    connection_acquisition_timeout: float = 10.0
    max_transaction_retry_time: float = 5.0

    @classmethod
    def from_settings(cls) -> Neo4jSettings:
        if not settings.NEO4J_URI:
            raise ImproperlyConfigured("NEO4J_URI is required when GRAPH_BACKEND=neo4j")
        return cls(
            uri=settings.NEO4J_URI,
            user=settings.NEO4J_USER,
            password=settings.NEO4J_PASSWORD,
            database=settings.NEO4J_DATABASE,
        )


class Neo4jGraphStore:
    def __init__(self, config: Neo4jSettings) -> None:
        self._config = config
        self._driver = neo4j.GraphDatabase.driver(
            config.uri,
            auth=(config.user, config.password),
            connection_timeout=config.connection_timeout,
            connection_acquisition_timeout=config.connection_acquisition_timeout,
            max_transaction_retry_time=config.max_transaction_retry_time,
        )
        self._schema_lock = threading.Lock()
        self._schema_ready = False

    def record_chunk_concepts(self, mentions: Sequence[ChunkConcepts]) -> None:
        rows = mention_rows(mentions)
        if not rows:
            return
        pairs: Counter[tuple[str, str]] = Counter()
        for entry in rows.values():
            pairs.update(itertools.combinations(sorted(c.key for c in entry.concepts), 2))
        params = {
            "ids": list(rows),
            "rows": [
                {
                    "chunk_id": e.chunk_id,
                    "library_id": e.library_id,
                    "collection_id": e.collection_id,
                    "concepts": [{"key": c.key, "label": c.label, "score": c.score} for c in e.concepts],
                }
                for e in rows.values()
            ],
            "pairs": [{"source": a, "target": b, "weight": n} for (a, b), n in sorted(pairs.items())],
        }

        def write(tx: neo4j.ManagedTransaction) -> None:
            # Replace: the chunks' old pairs come off their edges before the new ones go on.
            tx.run(FORGET_EDGES, params).consume()
            tx.run(FORGET_CHUNKS, params).consume()
            tx.run(WRITE_MENTIONS, params).consume()
            tx.run(ADD_EDGES, params).consume()

        self._execute(write, write_access=True)

    def forget_chunks(self, chunk_ids: Sequence[int]) -> None:
        if not chunk_ids:
            return
        params = {"ids": list(chunk_ids)}

        def write(tx: neo4j.ManagedTransaction) -> None:
            tx.run(FORGET_EDGES, params).consume()
            tx.run(FORGET_CHUNKS, params).consume()

        self._execute(write, write_access=True)

    def neighbours(
        self, concept_key: str, *, limit: int, library_ids: Sequence[int] | None = None
    ) -> list[Neighbour]:
        check_limit(limit)
        if library_ids is not None and not library_ids:
            return []
        query = NEIGHBOURS if library_ids is None else NEIGHBOURS_WITHIN
        records = self._read(
            query,
            key=concept_key,
            limit=limit,
            examples=EXAMPLE_CHUNKS,
            library_ids=None if library_ids is None else list(library_ids),
        )
        return [Neighbour(r["key"], r["label"], r["weight"], list(r["examples"])) for r in records]

    def expand(self, concept_keys: Sequence[str], *, hops: int = 1, limit: int) -> list[tuple[str, float]]:
        return expand_by_hops(concept_keys, hops=hops, limit=limit, fetch_edges=self._edges_of)

    def _edges_of(self, keys: list[str], per_key: int) -> Mapping[str, NodeEdges]:
        records = self._read(EDGES_OF, keys=keys, per_key=per_key)
        return {r["key"]: NodeEdges(r["strongest"], [(k, w) for k, w in r["near"]]) for r in records}

    def chunks_mentioning(
        self,
        concept_keys_with_weights: Sequence[tuple[str, float]],
        *,
        scope: Scope = EVERYWHERE,
        limit: int,
    ) -> list[tuple[int, float]]:
        check_limit(limit)
        weights = merged_weights(concept_keys_with_weights)
        if not weights or scope.matches_nothing():
            return []
        where, params = scope.cypher("ch")
        records = self._read(
            CHUNKS_MENTIONING % where,
            weights=[{"key": key, "weight": weight} for key, weight in weights.items()],
            limit=limit,
            **params,
        )
        return [(r["chunk_id"], float(r["score"])) for r in records]

    def top_concepts(self, *, scope: Scope = EVERYWHERE, limit: int, offset: int = 0) -> list[ConceptCount]:
        check_limit(limit)
        if scope.matches_nothing():
            return []
        where, params = scope.cypher("ch")
        records = self._read(TOP_CONCEPTS % where, limit=limit, offset=max(0, offset), **params)
        return [ConceptCount(r["key"], r["label"], r["mentions"]) for r in records]

    def known_concepts(self, keys: Sequence[str]) -> list[str]:
        if not keys:
            return []
        known = {r["key"] for r in self._read(KNOWN, keys=list(dict.fromkeys(keys)))}
        return [key for key in dict.fromkeys(keys) if key in known]

    def close(self) -> None:
        self._driver.close()

    def ensure_schema(self) -> None:
        """Create the constraints and indexes once per process (each statement is idempotent)."""
        with self._schema_lock:
            if self._schema_ready:
                return
            with (
                _translated_errors(self._config.uri),
                self._driver.session(database=self._config.database) as session,
            ):
                for statement in SCHEMA:
                    session.run(statement).consume()
            self._schema_ready = True

    def _read(self, query: str, **params: Any) -> list[neo4j.Record]:
        def read(tx: neo4j.ManagedTransaction) -> list[neo4j.Record]:
            return list(tx.run(query, params))

        return self._execute(read, write_access=False)

    def _execute(self, work: Callable[[neo4j.ManagedTransaction], T], *, write_access: bool) -> T:
        self.ensure_schema()
        with (
            _translated_errors(self._config.uri),
            self._driver.session(database=self._config.database) as session,
        ):
            if write_access:
                return session.execute_write(work)
            return session.execute_read(work)


@contextmanager
def _translated_errors(uri: str) -> Iterator[None]:
    """Driver exceptions as GraphUnavailable / GraphError, naming the server."""
    try:
        yield
    except AuthError as exc:
        raise GraphUnavailable(f"Neo4j at {uri} refused the credentials (NEO4J_USER/NEO4J_PASSWORD)") from exc
    except (ServiceUnavailable, SessionExpired) as exc:
        raise GraphUnavailable(f"Neo4j at {uri} is unreachable: {exc}") from exc
    except (Neo4jError, DriverError) as exc:
        raise GraphError(f"Neo4j query failed: {exc}") from exc
