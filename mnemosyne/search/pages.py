"""Pages as a unit of ranking: a page's whole text scored against the question.

The evidence a question needs is often a page — a statement, a table, a page of a manual — whose
words are spread over several chunks, none of which holds enough of them to win on its own. Each
page of a paged document is indexed whole (library_page, written at ingest under its document's
identity line), and the pages of the chunks the legs found are scored by BM25 over their full
text: the question's terms weighted by their rarity among chunks (library_term), each page's
length set against the average of the pages scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import connections

from mnemosyne.lib.replicas import reading
from mnemosyne.library.searchable_forms import query_form

PageKey = tuple[int, int]  # (item id, page number)


def page_scores(question: str, pages: Sequence[PageKey], configs: Sequence[str]) -> dict[PageKey, float]:
    """BM25 of each page's full text against the question (pages not indexed are left out)."""
    if not pages:
        return {}
    values: dict[str, Any] = {
        "query": query_form(question),
        "configs": list(configs),
        "items": [item for item, _ in pages],
        "numbers": [number for _, number in pages],
        "k1": settings.SEARCH_BM25_K1,
        "b": settings.SEARCH_BM25_B,
        "max_terms": settings.SEARCH_BM25_MAX_QUERY_TERMS,
    }
    sql = """
        WITH stats AS (
            SELECT greatest(chunk_count, 1)::float8 AS n FROM library_corpus_stats WHERE id = 1
        ), q AS (
            SELECT t.lexeme,
                   ln(1 + (s.n - t.document_frequency + 0.5::float8) / (t.document_frequency + 0.5::float8))
                       * (%(k1)s::float8 + 1) AS w
            FROM library_term t CROSS JOIN stats s
            WHERE t.lexeme = ANY (ARRAY(
                SELECT unnest(tsvector_to_array(to_tsvector(cfg, %(query)s)))
                FROM unnest(%(configs)s::regconfig[]) AS cfg
            ))
              AND t.document_frequency > 0
            ORDER BY w DESC, t.id
            LIMIT %(max_terms)s
        ), p AS (
            SELECT pg.item_id, pg.number, pg.search_vector, greatest(pg.length, 1)::float8 AS dl
            FROM unnest(%(items)s::bigint[], %(numbers)s::integer[]) AS v(item_id, number)
            JOIN library_page pg ON pg.item_id = v.item_id AND pg.number = v.number
        ), avg AS (
            SELECT greatest(avg(dl), 1) AS avgdl FROM p
        )
        SELECT p.item_id, p.number,
               sum(q.w * tf / (tf + %(k1)s::float8 * (1 - %(b)s::float8 + %(b)s::float8 * p.dl / a.avgdl)))
        FROM p CROSS JOIN avg a
        CROSS JOIN LATERAL (
            SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 AS tf
            FROM unnest(p.search_vector) AS u
        ) t
        JOIN q ON q.lexeme = t.lexeme
        GROUP BY p.item_id, p.number
    """
    with connections[reading()].cursor() as cursor:
        cursor.execute(sql, values)
        return {(item, number): float(score) for item, number, score in cursor.fetchall()}
