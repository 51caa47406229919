"""Pages as a unit of ranking: a page's whole text scored against the question.

The evidence a question needs is often a page — a statement, a table, a page of a manual — whose
words are spread over several chunks, none of which holds enough of them to win on its own. Each
page of a paged document is indexed whole (library_page, written at ingest under its document's
identity line), and the pages of the chunks the legs found are scored by BM25 over their full
text: the question's terms weighted as in every BM25 score of the search (query_terms.py), each
page's length set against the average of the pages scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connections

from mnemosyne.lib.replicas import reading
from mnemosyne.search import query_terms

PageKey = tuple[int, int]  # (item id, page number)


def page_scores(
    question: str, pages: Sequence[PageKey], configs: Sequence[str], *, periods: bool = False
) -> dict[PageKey, float]:
    """BM25 of each page's full text against the question (pages not indexed are left out)."""
    if not pages:
        return {}
    values: dict[str, Any] = query_terms.values(question, configs, periods=periods) | {
        "items": [item for item, _ in pages],
        "numbers": [number for _, number in pages],
    }
    sql = f"""{query_terms.SQL}
        , p AS (
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
        JOIN query_terms q ON q.lexeme = t.lexeme
        GROUP BY p.item_id, p.number
    """
    with connections[reading()].cursor() as cursor:
        cursor.execute(sql, values)
        return {(item, number): float(score) for item, number, score in cursor.fetchall()}
