"""The search legs: each returns (chunk id, score) best first, with the filters applied inside."""

from __future__ import annotations

import itertools
import re
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.postgres.search import SearchQuery
from django.db import connections
from django.db.backends.utils import CursorWrapper
from django.db.models import Q

from mnemosyne.embedding import Embedder
from mnemosyne.graph import get_graph_store
from mnemosyne.graph.concepts import query_concepts
from mnemosyne.lib import prepared
from mnemosyne.lib.replicas import reading
from mnemosyne.library import vector_models
from mnemosyne.library.models import Chunk
from mnemosyne.search import document_legs, query_terms
from mnemosyne.search.filters import Filters
from mnemosyne.search.hits import HitChunk, HitItem, Named
from mnemosyne.search.units import Located


def vector_leg(
    vector: Sequence[float], filters: Filters, limit: int, *, located: dict[int, Located] | None = None
) -> list[tuple[int, float]]:
    """HNSW cosine search; the query vector is a bound parameter so the index is used, sent in
    binary and planned each time (not prepared: the plan depends on how many chunks the filters
    leave). Where each chunk found is goes into `located`, when given (read from the rows the scan
    reads anyway)."""
    where, params = filters.chunk_sql()
    dimensions = len(vector)
    # The partial HNSW index of this dimension (vector_models.ensure_index) serves this query: the
    # same expression and predicate.
    sql = f"""
        SELECT c.id, c.embedding::vector({dimensions}) <=> %(vector)s::vector({dimensions}) AS distance,
               {_LOCATION}
        FROM library_chunk c
        WHERE vector_dims(c.embedding) = {dimensions} {where}
        ORDER BY distance
        LIMIT %(limit)s
    """
    with prepared.cursor(reading(), prepare=False) as cursor:
        _hnsw_session_settings(cursor)
        values: dict[str, Any] = {"vector": vector_models.query_vector(cursor, vector), "limit": limit}
        cursor.execute(sql, values | params)
        rows = cursor.fetchall()
    _keep_locations(rows, located)
    # relaxed_order may return neighbours slightly out of order.
    rows.sort(key=lambda row: row[1])
    return [(row[0], 1.0 - float(row[1])) for row in rows]


# Where a chunk `c` is, as the last columns of a leg's rows (units.Located).
_LOCATION = "c.item_id, c.page, c.page_end, c.uid"


def _keep_locations(rows: Sequence[Sequence[Any]], located: dict[int, Located] | None) -> None:
    """Each row's chunk (its first column) located by its last four (_LOCATION)."""
    if located is not None:
        for row in rows:
            located[row[0]] = Located(row[-4], row[-3], row[-2], row[-1])


# Database sessions (raw connections) that already carry the vector leg's settings, with the
# ef_search they carry: set once per connection, not in a transaction around every search.
_HNSW_SESSIONS: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


def _hnsw_session_settings(cursor: CursorWrapper) -> None:
    """hnsw.ef_search, and pgvector 0.8's iterative scans so filtered searches still fill `limit`.

    Inside a transaction they are set for that transaction only: its rollback would undo them.
    """
    ef_search = settings.SEARCH_HNSW_EF_SEARCH
    connection = connections[reading()]
    local = connection.in_atomic_block
    raw = connection.connection
    if not local and _HNSW_SESSIONS.get(raw) == ef_search:
        return
    cursor.execute(
        "SELECT set_config('hnsw.ef_search', %s, %s), set_config('hnsw.iterative_scan', 'relaxed_order', %s)",
        [str(ef_search), local, local],
    )
    if not local:
        _HNSW_SESSIONS[raw] = ef_search


# Concepts the query's concepts are expanded to before chunks are looked up.
GRAPH_EXPANSION_LIMIT = 30

# Operators of websearch_to_tsquery: "quoted phrase", -exclusion, OR.
_OPERATORS = re.compile(r'"|(^|\s)-\w|\sor\s', re.IGNORECASE)
# Operators count in queries up to this long; a longer text is taken as a bag of words (its
# tsquery would be thousands of terms, which the planner answers with a scan of every chunk).
OPERATOR_MAX_QUERY_CHARS = 1000
# A query with operators that at most this many chunks match is scored exactly over those chunks
# (found through the GIN index); one that matches more keeps the bounded reads, then its operators.
OPERATOR_EXACT_MATCHES = 5000

# Per posting: w·tf / (tf + k1·(1 - b) + k1·b·dl/avgdl), in float8 (a numeric literal would make
# every posting's arithmetic numeric, several times slower). A chunk's BM25 is their sum.
TERM_SCORE = "q.w * p.tf / (p.tf + q.c1 + q.c2 * p.dl)"
_SCORE = f"sum({TERM_SCORE})"


def fulltext_leg(
    query: str, filters: Filters, limit: int, *, located: dict[int, Located] | None = None
) -> list[tuple[int, float]]:
    """BM25 (k1, b from settings) over the inverted index, with the stemming and stop words of the
    searched libraries' languages.

    IDF and the average chunk length come from corpus statistics that triggers keep current.
    Each query term contributes its SEARCH_BM25_TERM_POSTINGS strongest postings (by impact,
    read in index order), so the cost is bounded by the query, not by the corpus: a chunk
    outside a very common term's strongest postings misses only that term's small share.
    The best SEARCH_BM25_RESCORE chunks are then scored exactly: what the terms whose every posting
    was read gave them is summed already, and each candidate's postings of the other terms are
    looked up.
    A query of up to OPERATOR_MAX_QUERY_CHARS using websearch operators (phrases, -exclusion,
    OR) also has to match them. Where each chunk found is goes into `located`, when given.
    """
    where, params = filters.posting_sql()
    bounds = {
        "per_term": settings.SEARCH_BM25_TERM_POSTINGS,
        "rescore": max(limit, settings.SEARCH_BM25_RESCORE),
        "limit": limit,
    }
    values: dict[str, Any] = (
        query_terms.values(query, filters.text_configs, periods=filters.written_periods) | params | bounds
    )
    query = values["query"]
    matching = ""
    if len(query) <= OPERATOR_MAX_QUERY_CHARS and _OPERATORS.search(query):
        matched = _operator_matches(query, filters)
        if matched is not None:
            return _score_chunks(matched, where, values)
        matches = " OR ".join(
            f"search_vector @@ websearch_to_tsquery(%(config_{index})s::regconfig, %(query)s)"
            for index in range(len(filters.text_configs))
        )
        values |= {f"config_{index}": config for index, config in enumerate(filters.text_configs)}
        matching = f"WHERE p.chunk_id IN (SELECT id FROM library_chunk WHERE {matches})"
    sql = f"""{query_terms.SQL}
        , candidates AS (
            SELECT p.chunk_id, sum(p.score) AS score,
                   -- What of the score is exact already: the terms whose every posting was read.
                   sum(p.score) FILTER (WHERE q.df <= %(per_term)s) AS exact
            FROM query_terms q
            CROSS JOIN LATERAL (
                -- Each posting's share computed once, as it is read (a subquery with a LIMIT is
                -- not merged into the query: its output is what both sums add up).
                SELECT p.chunk_id, {TERM_SCORE} AS score
                FROM library_posting p
                WHERE p.term_id = q.id {where}
                ORDER BY p.impact DESC
                LIMIT %(per_term)s
            ) p
            {matching}
            GROUP BY p.chunk_id
            ORDER BY score DESC, p.chunk_id
            LIMIT %(rescore)s
        ), best AS (
            SELECT chunk_id, score FROM (
                SELECT c.chunk_id, coalesce(c.exact, 0) + coalesce((
                    -- The terms with more postings than were read: each candidate's postings of
                    -- them, one probe of posting_by_chunk_term (chunk, term) a candidate, the
                    -- index alone (it covers tf and dl: the postings' heap stays unread); a
                    -- subquery per candidate, never a read of those terms' whole posting lists.
                    -- Nothing to look up when no term was cut.
                    SELECT {_SCORE}
                    FROM library_posting p JOIN query_terms q ON q.id = p.term_id
                    WHERE p.chunk_id = c.chunk_id
                      AND p.term_id = ANY ((
                          SELECT array_agg(id) FROM query_terms WHERE df > %(per_term)s
                      )::bigint[])
                ), 0) AS score
                FROM candidates c
                -- A fence: merged into the query, each kept row's score would be looked up again
                -- for the SELECT list after the sort had looked it up for the ORDER BY.
                OFFSET 0
            ) scored
            -- Chunks of equal score (copies) in chunk order: the float sum's last bits depend on
            -- the order its rows come in, which is the plan's.
            ORDER BY round(score::numeric, 9) DESC, chunk_id
            LIMIT %(limit)s
        )
        -- Where the chunks kept are (the chunks' rows read for those alone).
        SELECT best.chunk_id, best.score, {_LOCATION}
        FROM best JOIN library_chunk c ON c.id = best.chunk_id
        ORDER BY round(best.score::numeric, 9) DESC, best.chunk_id
    """
    with prepared.cursor(reading()) as cursor:
        cursor.execute(sql, values)
        rows = cursor.fetchall()
    _keep_locations(rows, located)
    return [(row[0], float(row[1])) for row in rows]


def _operator_matches(query: str, filters: Filters) -> list[int] | None:
    """The chunks matching the query's operators, when there are few enough to score them all."""
    matching = Q()
    for config in filters.text_configs:
        matching |= Q(search_vector=SearchQuery(query, config=config, search_type="websearch"))
    matches = Chunk.objects.filter(filters.q(), matching).values_list("id", flat=True)[
        : OPERATOR_EXACT_MATCHES + 1
    ]
    found = list(matches)
    return found if len(found) <= OPERATOR_EXACT_MATCHES else None


def _score_chunks(chunk_ids: list[int], where: str, values: dict[str, Any]) -> list[tuple[int, float]]:
    """BM25 of the given chunks over all their query terms' postings (the primary key's index)."""
    if not chunk_ids:
        return []
    sql = f"""{query_terms.SQL}
        SELECT p.chunk_id, {_SCORE} AS score
        FROM query_terms q
        JOIN library_posting p ON p.term_id = q.id AND p.chunk_id = ANY (%(chunk_ids)s) {where}
        GROUP BY p.chunk_id
        ORDER BY score DESC, p.chunk_id
        LIMIT %(limit)s
    """
    with connections[reading()].cursor() as cursor:
        cursor.execute(sql, values | {"chunk_ids": chunk_ids})
        return [(chunk_id, float(score)) for chunk_id, score in cursor.fetchall()]


def graph_concepts(query: str, filters: Filters) -> list[tuple[str, float]]:
    """The concepts the graph leg looks for: those the query names, expanded through the concept
    graph, each with its weight."""
    store = get_graph_store()
    seeds = store.known_concepts(query_concepts(query))
    if not seeds:
        return []
    if filters.confined:
        # Edge weights count co-occurrences in every library: a confined caller's ranking must
        # not be shaped by chunks it cannot see, so it gets the query's own concepts only.
        return [(seed, 1.0) for seed in seeds[:GRAPH_EXPANSION_LIMIT]]
    return store.expand(seeds, hops=settings.SEARCH_GRAPH_HOPS, limit=GRAPH_EXPANSION_LIMIT)


def graph_leg(query: str, filters: Filters, limit: int) -> list[tuple[int, float]]:
    """Concepts named in the query, expanded through the concept graph, to the chunks mentioning them."""
    expanded = graph_concepts(query, filters)
    if not expanded:
        return []
    store = get_graph_store()
    found = store.chunks_mentioning(expanded, scope=filters, limit=limit)
    if (not filters.include_images or filters.item_ids is not None) and found:
        # The store knows libraries and collections, not images or documents: those are kept here.
        kept = set(
            Chunk.objects.filter(filters.q(), id__in=[chunk_id for chunk_id, _ in found]).values_list(
                "id", flat=True
            )
        )
        found = [(chunk_id, score) for chunk_id, score in found if chunk_id in kept]
    return found


# What a hit shows and cites: the positional fields of hits.HitChunk, HitItem and Named, in their
# order (an item's metadata and a chunk's tsvector stay in the database, and so does its vector
# unless asked for). A row holds them in this order, so each is built from a slice of it.
_HIT_COLUMNS = {
    "c": tuple(column.name for column in fields(HitChunk) if not column.kw_only),
    "i": tuple(column.name for column in fields(HitItem)),
    "o": tuple(column.name for column in fields(Named)),
    "l": tuple(column.name for column in fields(Named)),
}
_BOUNDS = list(itertools.accumulate(map(len, _HIT_COLUMNS.values()), initial=0))
_CHUNK, _ITEM, _COLLECTION, _LIBRARY = itertools.starmap(slice, itertools.pairwise(_BOUNDS))
_EMBEDDING = _BOUNDS[-1]
_HIT_FROM = """
    FROM library_chunk c
    JOIN library_item i ON i.id = c.item_id
    JOIN library_collection o ON o.id = c.collection_id
    JOIN library_library l ON l.id = c.library_id
    WHERE c.id = ANY (%s)
"""
_HIT_SELECT = ", ".join(
    f"{table}.{name} AS {table}_{name}" for table, names in _HIT_COLUMNS.items() for name in names
)
_HIT_SQL = f"SELECT {_HIT_SELECT} {_HIT_FROM}"
_HIT_SQL_WITH_EMBEDDINGS = f"SELECT {_HIT_SELECT}, c.embedding::real[] AS c_embedding {_HIT_FROM}"


def hydrate(ids: Sequence[int], *, with_embeddings: bool = False) -> dict[int, HitChunk]:
    """The hits' chunks with their item, collection and library, in one query."""
    if not ids:
        return {}
    with prepared.cursor(reading()) as cursor:
        cursor.execute(_HIT_SQL_WITH_EMBEDDINGS if with_embeddings else _HIT_SQL, [list(ids)])
        rows = cursor.fetchall()
    chunks: dict[int, HitChunk] = {}
    for row in rows:
        vector = row[_EMBEDDING] if with_embeddings else None
        chunks[row[0]] = HitChunk(
            *row[_CHUNK],
            item=HitItem(*row[_ITEM]),
            collection=Named(*row[_COLLECTION]),
            library=Named(*row[_LIBRARY]),
            embedding=None if vector is None else np.asarray(vector, dtype=np.float32),
        )
    return chunks


def locate(ids: Sequence[int], known: Mapping[int, Located] | None = None) -> dict[int, Located]:
    """Each chunk's item, pages and uid (for scoring its page and document, and for grouping); the
    chunks `known` already (the legs' locations) are not read again."""
    known = known or {}
    located = {chunk_id: known[chunk_id] for chunk_id in ids if chunk_id in known}
    unknown = [chunk_id for chunk_id in ids if chunk_id not in located]
    if not unknown:
        return located
    with prepared.cursor(reading()) as cursor:
        cursor.execute(f"SELECT c.id, {_LOCATION} FROM library_chunk c WHERE c.id = ANY(%s)", [unknown])
        _keep_locations(cursor.fetchall(), located)
    return located


@dataclass(frozen=True)
class LegQuery:
    """What every leg is given: the query, the resolved filters, how many candidates to return."""

    text: str
    filters: Filters
    limit: int
    embedder: Embedder
    # The documents the question names, and the question without the words that named them
    # (search/named_documents.py): the named_* legs search those documents for that text.
    named_items: list[int] = field(default_factory=list)
    named_text: str = ""
    named_vector_text: str = ""
    # What the vector legs embed, when not `text` (the question without its instructions).
    vector_text: str = ""
    # Where the chunks the legs found are, as the legs read it (units.Located): one search's, filled
    # by its legs' threads, so that the units' evidence need not read it again (evidence.py).
    located: dict[int, Located] = field(default_factory=dict)


LegResult = list[tuple[int, float]]

# The legs by name (types.SEARCH_TYPES): each returns (chunk id, score), best first.
LEGS: Mapping[str, Callable[[LegQuery], LegResult]] = {
    "vector": lambda q: vector_leg(
        q.embedder.embed_query(q.vector_text or q.text), q.filters, q.limit, located=q.located
    ),
    "fulltext": lambda q: fulltext_leg(q.text, q.filters, q.limit, located=q.located),
    "graph": lambda q: graph_leg(q.text, q.filters, q.limit),
    "named_vector": lambda q: document_legs.vector_in(
        q.embedder.embed_query(q.named_vector_text or q.named_text),
        q.named_items,
        q.limit,
        include_images=q.filters.include_images,
    ),
    "named_fulltext": lambda q: document_legs.fulltext_in(
        q.named_text,
        q.named_items,
        q.limit,
        configs=q.filters.text_configs,
        include_images=q.filters.include_images,
        periods=q.filters.written_periods,
    ),
}
