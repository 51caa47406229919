"""The passage legs again, within the documents a question names: exact, over their chunks alone.

Once search/named_documents.py knows which documents a question names ("Amazon's FY2017 10-K"), what
remains is to find the passage in them, and there the words that named the document help no
more: every chunk of it carries them in its context. So these legs search the named documents'
chunks for the question without its identity words (`content_query`), exactly — a cosine over
each of their chunks' vectors, BM25 over each of their chunks' full-text vectors with the
corpus's statistics, so the scores compare with the main legs' — and search/service.py fuses them
as two more legs. A few documents hold a few thousand chunks at most: no index is needed, and
none would serve a filter this narrow well.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connections

from mnemosyne.lib import prepared
from mnemosyne.lib.replicas import reading
from mnemosyne.library import vector_models
from mnemosyne.library.models import ChunkKind
from mnemosyne.search import query_terms

LegResult = list[tuple[int, float]]


def vector_in(vector: Sequence[float], item_ids: list[int], limit: int, *, include_images: bool) -> LegResult:
    """The items' chunks by cosine similarity to `vector`, every one of them compared."""
    dimensions = len(vector)
    images = "" if include_images else f"AND c.kind <> '{ChunkKind.IMAGE.value}'"
    # "+ 0" keeps the planner off the HNSW index: these few chunks are compared exactly.
    sql = f"""
        SELECT c.id, c.embedding::vector({dimensions}) <=> %(vector)s::vector({dimensions})
        FROM library_chunk c
        WHERE c.item_id = ANY(%(items)s) AND vector_dims(c.embedding) = {dimensions} {images}
        ORDER BY (c.embedding::vector({dimensions}) <=> %(vector)s::vector({dimensions})) + 0, c.id
        LIMIT %(limit)s
    """
    with prepared.cursor(reading(), prepare=False) as cursor:
        values = {"vector": vector_models.query_vector(cursor, vector), "items": item_ids, "limit": limit}
        cursor.execute(sql, values)
        return [(chunk_id, 1.0 - float(distance)) for chunk_id, distance in cursor.fetchall()]


def fulltext_in(
    query: str,
    item_ids: list[int],
    limit: int,
    *,
    configs: Sequence[str],
    include_images: bool,
    periods: bool = False,
) -> LegResult:
    """BM25 of the items' chunks that hold a query term, from their full-text vectors."""
    images = "" if include_images else f"AND c.kind <> '{ChunkKind.IMAGE.value}'"
    values: dict[str, Any] = query_terms.values(query, configs, periods=periods) | {
        "items": item_ids,
        "limit": limit,
    }
    sql = f"""{query_terms.SQL}
        , matching AS (
            SELECT c.id, c.search_vector,
                   (SELECT sum(coalesce(array_length(u.positions, 1), 1))
                    FROM unnest(c.search_vector) u)::float8 AS dl
            FROM library_chunk c
            WHERE c.item_id = ANY(%(items)s) {images}
              AND c.search_vector @@ (SELECT array_to_string(array_agg(quote_literal(lexeme)), ' | ')::tsquery
                                      FROM query_terms)
        )
        SELECT m.id, sum(q.w * t.tf / (t.tf + q.c1 + q.c2 * m.dl)) AS score
        FROM matching m
        CROSS JOIN LATERAL (
            SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 AS tf
            FROM unnest(m.search_vector) AS u
        ) t
        JOIN query_terms q ON q.lexeme = t.lexeme
        GROUP BY m.id
        ORDER BY score DESC, m.id
        LIMIT %(limit)s
    """
    with connections[reading()].cursor() as cursor:
        cursor.execute(sql, values)
        return [(chunk_id, float(score)) for chunk_id, score in cursor.fetchall()]
