"""What a hit's leg scores are made of, for `explain`: each query term's share of its full-text
(BM25) score — the leg's own sum, term by term, so the shares add up to the score — and the
concepts through which the graph leg found it, each with what it added (concept weight times the
chunk's mention score). Read for the hits a search shows, only when asked."""

from __future__ import annotations

from collections import defaultdict

from django.db import connections

from mnemosyne.graph.base import merged_weights
from mnemosyne.graph.postgres import PostgresGraphStore
from mnemosyne.lib.replicas import reading
from mnemosyne.search import legs, query_terms
from mnemosyne.search.filters import Filters


def term_shares(query: str, filters: Filters, chunk_ids: list[int]) -> dict[int, dict[str, float]]:
    """For each chunk, each query term (as the index holds it: stemmed) and its share of the
    chunk's BM25 score, as fulltext_leg computes it."""
    if not chunk_ids:
        return {}
    values = query_terms.values(query, filters.text_configs, periods=filters.written_periods) | {
        "chunk_ids": chunk_ids
    }
    sql = f"""{query_terms.SQL}
        SELECT p.chunk_id, t.lexeme, {legs.TERM_SCORE}
        FROM query_terms q
        JOIN library_term t ON t.id = q.id
        JOIN library_posting p ON p.term_id = q.id AND p.chunk_id = ANY(%(chunk_ids)s)
        ORDER BY p.chunk_id, 3 DESC, t.lexeme
    """
    shares: dict[int, dict[str, float]] = defaultdict(dict)
    with connections[reading()].cursor() as cursor:
        cursor.execute(sql, values)
        for chunk_id, lexeme, share in cursor:
            shares[chunk_id][lexeme] = float(share)
    return dict(shares)


def concept_shares(query: str, filters: Filters, chunk_ids: list[int]) -> dict[int, dict[str, float]]:
    """For each chunk, the concepts the graph leg looked for that it mentions, each with what it
    added to the chunk's graph score."""
    if not chunk_ids:
        return {}
    weights = merged_weights(legs.graph_concepts(query, filters))
    shares: dict[int, dict[str, float]] = {}
    # What chunks mention is PostgreSQL's (a Neo4j graph is its projection).
    for mentions in PostgresGraphStore().mentions_of(chunk_ids):
        found = {
            concept.key: weights[concept.key] * concept.score
            for concept in mentions.concepts
            if concept.key in weights
        }
        if found:
            shares[mentions.chunk_id] = dict(sorted(found.items(), key=lambda pair: (-pair[1], pair[0])))
    return shares
