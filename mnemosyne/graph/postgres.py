"""GraphStore on PostgreSQL tables (graph_concept, graph_mention, graph_edge): the embedded default.

Writes are one statement per table per batch; edge weights follow mentions by trigger. Writes and
the mentions a projection is brought in line with go to the primary; a search's reads to the
database it reads from (replicas.reading(): a replica holds these tables too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.db import connection, connections, transaction

from mnemosyne.graph.base import (
    EXAMPLE_CHUNKS,
    ChunkConcepts,
    Concept,
    ConceptCount,
    Neighbour,
    NodeEdges,
    check_limit,
    expand_by_hops,
    mention_rows,
    merged_weights,
)
from mnemosyne.lib.replicas import reading
from mnemosyne.lib.scope import EVERYWHERE, Scope

# Every neighbour of one concept: edges are stored once per pair, so look both ways.
_NEIGHBOURS_OF = """
    SELECT e.target_id AS id, e.weight FROM graph_edge e WHERE e.source_id = {seed}
    UNION ALL
    SELECT e.source_id, e.weight FROM graph_edge e WHERE e.target_id = {seed}
"""


class PostgresGraphStore:
    def record_chunk_concepts(self, mentions: Sequence[ChunkConcepts]) -> None:
        rows = mention_rows(mentions)
        if not rows:
            return
        labels: dict[str, str] = {}
        chunk_ids, keys, scores, library_ids, collection_ids = [], [], [], [], []
        for entry in rows.values():
            for concept in entry.concepts:
                labels.setdefault(concept.key, concept.label)
                chunk_ids.append(entry.chunk_id)
                keys.append(concept.key)
                scores.append(concept.score)
                library_ids.append(entry.library_id)
                collection_ids.append(entry.collection_id)
        with transaction.atomic(), connection.cursor() as cursor:
            # Replace: the delete trigger takes the chunks' old pairs off their edges.
            cursor.execute("DELETE FROM graph_mention WHERE chunk_id = ANY(%s)", [list(rows)])
            if not keys:
                return
            # Sorted, so concurrent writers lock concept rows in the same order.
            ordered = sorted(labels)
            cursor.execute(
                """
                INSERT INTO graph_concept (key, label)
                SELECT * FROM unnest(%s::text[], %s::text[])
                ON CONFLICT (key) DO NOTHING
                """,
                [ordered, [labels[key] for key in ordered]],
            )
            # A second statement, so it sees concepts another transaction committed meanwhile.
            # The insert trigger adds 1 to the edge of every pair of concepts per chunk.
            cursor.execute(
                """
                INSERT INTO graph_mention (chunk_id, concept_id, score, library_id, collection_id)
                SELECT u.chunk_id, c.id, u.score, u.library_id, u.collection_id
                FROM unnest(%s::bigint[], %s::text[], %s::float8[], %s::bigint[], %s::bigint[])
                     AS u(chunk_id, key, score, library_id, collection_id)
                JOIN graph_concept c ON c.key = u.key
                ORDER BY u.chunk_id, c.id
                ON CONFLICT DO NOTHING
                """,
                [chunk_ids, keys, scores, library_ids, collection_ids],
            )

    def forget_chunks(self, chunk_ids: Sequence[int]) -> None:
        if not chunk_ids:
            return
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM graph_mention WHERE chunk_id = ANY(%s)", [list(chunk_ids)])

    def neighbours(
        self, concept_key: str, *, limit: int, library_ids: Sequence[int] | None = None
    ) -> list[Neighbour]:
        check_limit(limit)
        if library_ids is not None:
            return self._neighbours_within(concept_key, limit=limit, library_ids=library_ids)
        sql = f"""
            WITH seed AS (SELECT id FROM graph_concept WHERE key = %s),
            near AS ({_NEIGHBOURS_OF.format(seed="(SELECT id FROM seed)")})
            SELECT c.key, c.label, near.weight,
                   ARRAY(
                       SELECT m.chunk_id
                       FROM graph_mention m
                       JOIN graph_mention o ON o.chunk_id = m.chunk_id AND o.concept_id = near.id
                       WHERE m.concept_id = (SELECT id FROM seed)
                       ORDER BY m.chunk_id
                       LIMIT %s
                   )
            FROM near JOIN graph_concept c ON c.id = near.id
            ORDER BY near.weight DESC, c.key
            LIMIT %s
        """
        with connections[reading()].cursor() as cursor:
            cursor.execute(sql, [concept_key, EXAMPLE_CHUNKS, limit])
            return [Neighbour(key, label, weight, list(examples)) for key, label, weight, examples in cursor]

    def _neighbours_within(
        self, concept_key: str, *, limit: int, library_ids: Sequence[int]
    ) -> list[Neighbour]:
        # Counted from the mentions in those libraries: the stored edges count every library.
        if not library_ids:
            return []
        sql = """
            WITH seed AS (SELECT id FROM graph_concept WHERE key = %s),
            near AS (
                SELECT o.concept_id AS id, count(*) AS weight,
                       (array_agg(m.chunk_id ORDER BY m.chunk_id))[1:%s] AS examples
                FROM graph_mention m
                JOIN graph_mention o ON o.chunk_id = m.chunk_id AND o.concept_id <> m.concept_id
                WHERE m.concept_id = (SELECT id FROM seed) AND m.library_id = ANY(%s)
                GROUP BY o.concept_id
            )
            SELECT c.key, c.label, near.weight, near.examples
            FROM near JOIN graph_concept c ON c.id = near.id
            ORDER BY near.weight DESC, c.key
            LIMIT %s
        """
        with connections[reading()].cursor() as cursor:
            cursor.execute(sql, [concept_key, EXAMPLE_CHUNKS, list(library_ids), limit])
            return [Neighbour(key, label, weight, list(examples)) for key, label, weight, examples in cursor]

    def expand(self, concept_keys: Sequence[str], *, hops: int = 1, limit: int) -> list[tuple[str, float]]:
        return expand_by_hops(concept_keys, hops=hops, limit=limit, fetch_edges=self._edges_of)

    def _edges_of(self, keys: list[str], per_key: int) -> Mapping[str, NodeEdges]:
        sql = """
            WITH seeds AS (SELECT id, key FROM graph_concept WHERE key = ANY(%s)),
            near AS (
                SELECT s.key AS seed, e.target_id AS id, e.weight
                FROM seeds s JOIN graph_edge e ON e.source_id = s.id
                UNION ALL
                SELECT s.key, e.source_id, e.weight
                FROM seeds s JOIN graph_edge e ON e.target_id = s.id
            ),
            ranked AS (
                SELECT near.seed, c.key, near.weight,
                       max(near.weight) OVER (PARTITION BY near.seed) AS strongest,
                       row_number() OVER (PARTITION BY near.seed ORDER BY near.weight DESC, c.key) AS rank
                FROM near JOIN graph_concept c ON c.id = near.id
            )
            SELECT seed, key, weight, strongest FROM ranked WHERE rank <= %s ORDER BY seed, rank
        """
        edges: dict[str, NodeEdges] = {}
        with connections[reading()].cursor() as cursor:
            cursor.execute(sql, [keys, per_key])
            for seed, key, weight, strongest in cursor:
                edges.setdefault(seed, NodeEdges(strongest, [])).edges.append((key, weight))
        return edges

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
        where, params = scope.sql("m.library_id", "m.collection_id")
        sql = f"""
            SELECT m.chunk_id, sum(w.weight * m.score) AS score
            FROM unnest(%(keys)s::text[], %(weights)s::float8[]) AS w(key, weight)
            JOIN graph_concept c ON c.key = w.key
            JOIN graph_mention m ON m.concept_id = c.id
            WHERE true {where}
            GROUP BY m.chunk_id
            ORDER BY score DESC, m.chunk_id
            LIMIT %(limit)s
        """
        with connections[reading()].cursor() as cursor:
            cursor.execute(
                sql, {**params, "keys": list(weights), "weights": list(weights.values()), "limit": limit}
            )
            return [(chunk_id, float(score)) for chunk_id, score in cursor]

    def top_concepts(self, *, scope: Scope = EVERYWHERE, limit: int, offset: int = 0) -> list[ConceptCount]:
        check_limit(limit)
        if scope.matches_nothing():
            return []
        where, params = scope.sql("m.library_id", "m.collection_id")
        sql = f"""
            SELECT c.key, c.label, counts.n
            FROM (
                SELECT m.concept_id, count(*) AS n
                FROM graph_mention m
                WHERE true {where}
                GROUP BY m.concept_id
            ) counts
            JOIN graph_concept c ON c.id = counts.concept_id
            ORDER BY counts.n DESC, c.key
            LIMIT %(limit)s OFFSET %(offset)s
        """
        with connections[reading()].cursor() as cursor:
            cursor.execute(sql, {**params, "limit": limit, "offset": max(0, offset)})
            return [ConceptCount(key, label, count) for key, label, count in cursor]

    def known_concepts(self, keys: Sequence[str]) -> list[str]:
        if not keys:
            return []
        sql = """
            SELECT c.key FROM graph_concept c
            WHERE c.key = ANY(%s) AND EXISTS (SELECT 1 FROM graph_mention m WHERE m.concept_id = c.id)
        """
        with connections[reading()].cursor() as cursor:
            cursor.execute(sql, [list(keys)])
            known = {key for (key,) in cursor}
        return [key for key in dict.fromkeys(keys) if key in known]

    def mentions_of(self, chunk_ids: Sequence[int]) -> list[ChunkConcepts]:
        """What the chunks mention now (the source of truth a projection is brought in line with);
        a chunk that mentions nothing, or no longer exists, is absent."""
        if not chunk_ids:
            return []
        sql = """
            SELECT m.chunk_id, m.library_id, m.collection_id, c.key, c.label, m.score
            FROM graph_mention m JOIN graph_concept c ON c.id = m.concept_id
            WHERE m.chunk_id = ANY(%s)
            ORDER BY m.chunk_id, c.key
        """
        found: dict[int, ChunkConcepts] = {}
        with connection.cursor() as cursor:
            cursor.execute(sql, [list(chunk_ids)])
            for chunk_id, library_id, collection_id, key, label, score in cursor:
                entry = found.setdefault(chunk_id, ChunkConcepts(chunk_id, library_id, collection_id, []))
                entry.concepts.append(Concept(key, label, score))
        return list(found.values())

    def close(self) -> None:
        """Nothing to release: Django owns the database connections."""
