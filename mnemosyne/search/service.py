"""SearchService: the one entry point every caller (MCP tool, command, test) uses.

Each leg applies the filters itself (AND-combined) and returns chunk ids best
first; the legs are fused (relative-score fusion by default, or reciprocal rank
fusion), then near-duplicates are collapsed, the head reranked when a reranker is
configured, and MMR applied when diversity is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError

from mnemosyne.embedding import Embedder, get_embedder
from mnemosyne.lib import replicas
from mnemosyne.lib.metrics import SEARCH_SECONDS
from mnemosyne.lib.tracing import tracer
from mnemosyne.library import selectors, vector_models
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.languages import text_search_config
from mnemosyne.library.services import validate_library_type
from mnemosyne.profiles import periods
from mnemosyne.profiles.query_rules import QueryRules, rules_for
from mnemosyne.search import evidence, leg_parts, leg_runs, legs
from mnemosyne.search.filters import Filters, documents_matching
from mnemosyne.search.fusion import Fused, relative_score_fusion, weighted_rrf
from mnemosyne.search.hits import HitChunk
from mnemosyne.search.named_documents import NamedDocuments, named_documents
from mnemosyne.search.rerankers import get_reranker
from mnemosyne.search.reranking import rerank_hits
from mnemosyne.search.shaping import GROUPS, collapse_near_duplicates, group_heads, maximal_marginal_relevance
from mnemosyne.search.types import (
    SEARCH_TYPES,
    LegHit,
    RankedHit,
    ResolvedSearch,
    SearchRequest,
    SearchResponse,
)
from mnemosyne.text.normalising import normalise_query

MAX_LIMIT = 100
MAX_QUERY_CHARS = 20_000
MAX_WINDOW = 500
# Each leg returns this many candidates (at least `limit`) for fusion.
MIN_CANDIDATES = 50
# The weight of the legs searching the documents a question names (document_legs.py), against
# the main legs' (each named leg weighs this times its main leg's weight).
NAMED_WEIGHT = 1.0


def validate(request: SearchRequest) -> ResolvedSearch:
    """Check the request and resolve its filters to ids, once: every leg then uses those ids."""
    query = normalise_query(request.query)
    if not query:
        raise InvalidArgument("query must not be empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidArgument(f"query is {len(query)} characters; the maximum is {MAX_QUERY_CHARS}")
    if not 1 <= request.limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be between 1 and {MAX_LIMIT}, got {request.limit}")
    if request.offset < 0 or request.offset + request.limit > MAX_WINDOW:
        raise InvalidArgument(f"results beyond the first {MAX_WINDOW} cannot be paged to")
    if request.diversity is not None and not 0.0 <= request.diversity <= 1.0:
        raise InvalidArgument(f"diversity must be between 0 and 1, got {request.diversity}")
    if not request.search_types:
        raise InvalidArgument(f"search_types must name at least one of {', '.join(SEARCH_TYPES)}")
    unknown = [name for name in request.search_types if name not in SEARCH_TYPES]
    if unknown:
        raise InvalidArgument(
            f"unknown search type {unknown[0]!r}; expected some of {', '.join(SEARCH_TYPES)}"
        )
    if request.alpha is not None and not 0.0 <= request.alpha <= 1.0:
        raise InvalidArgument(f"alpha must be between 0 and 1, got {request.alpha}")
    if request.library_type is not None:
        validate_library_type(request.library_type)
    if request.group_by not in (None, *GROUPS):
        raise InvalidArgument(f"group_by must be one of {', '.join(GROUPS)}, got {request.group_by!r}")
    filters, libraries, models, rules, identified = _resolve_filters(request)
    return ResolvedSearch(
        request=request,
        query=query,
        filters=filters,
        legs=tuple(dict.fromkeys(request.search_types)),
        libraries=libraries,
        models=frozenset(models - {""}),
        rules=rules,
        identified=identified,
    )


def _resolve_filters(
    request: SearchRequest,
) -> tuple[Filters, list[int] | None, set[str], QueryRules, bool]:
    """The filters as ids, the libraries the search reads (None: every library), the embedding
    models of their vectors, the rules their profiles and synonym sets run, and whether any of
    the documents in scope has an identity (what a question may name it by)."""
    # Unknown uids are an error naming them, not an empty result; the caller's library boundary
    # (an MCP token's libraries) narrows every leg, which may run in threads that do not see it.
    library_ids = (
        None if request.library_type is None else selectors.library_ids_of_type(request.library_type)
    )
    visible = selectors.visible_library_ids()
    if visible is not None:
        library_ids = sorted(visible if library_ids is None else visible.intersection(library_ids))
    library, library_identified = (
        selectors.library_to_search(request.library_uid) if request.library_uid else (None, False)
    )
    collection, collection_identified = (
        selectors.collection_to_search(request.collection_uid) if request.collection_uid else (None, False)
    )
    scoped = library or (collection.library if collection else None)
    if scoped:
        languages, models = {scoped.language}, {scoped.embedding_model}
        rules = rules_for([scoped.pk], [scoped.library_type])
        # A collection narrows the search to its own documents.
        identified = collection_identified if collection else library_identified
    else:
        traits = selectors.library_traits(library_ids)
        languages, models = set(traits.languages), set(traits.models)
        rules = rules_for(traits.ids, traits.types)
        identified = traits.identified
    filters = Filters(
        item_ids=documents_matching(request.documents) if request.documents else None,
        library_id=library.pk if library else None,
        library_ids=library_ids,
        collection_id=collection.pk if collection else None,
        include_images=request.include_images,
        confined=visible is not None,
        text_configs=tuple(sorted({text_search_config(language) for language in languages})) or ("english",),
        written_periods=rules.versions,
    )
    return filters, ([scoped.pk] if scoped else library_ids), models, rules, identified


def fuse(found_by_leg: dict[str, list[tuple[int, float]]], *, alpha: float | None) -> list[Fused[int]]:
    """Fuse the legs: relative-score fusion when alpha is given or configured, else weighted RRF.

    A single leg keeps its own order, with its scores normalised to [0, 1].
    """
    if len(found_by_leg) == 1:
        return relative_score_fusion(found_by_leg, dict.fromkeys(found_by_leg, 1.0))
    alpha = fusion_alpha(alpha)
    if alpha is not None:
        weights = {
            "vector": alpha,
            "fulltext": 1.0 - alpha,
            "graph": settings.SEARCH_GRAPH_WEIGHT,
            "named_vector": NAMED_WEIGHT * alpha,
            "named_fulltext": NAMED_WEIGHT * (1.0 - alpha),
        }
        return relative_score_fusion(found_by_leg, weights)
    rankings = {leg: [chunk_id for chunk_id, _ in found] for leg, found in found_by_leg.items()}
    rrf_weights = {
        "graph": settings.SEARCH_GRAPH_WEIGHT,
        "named_vector": NAMED_WEIGHT,
        "named_fulltext": NAMED_WEIGHT,
    }
    return weighted_rrf(rankings, rrf_weights, k=settings.SEARCH_RRF_K)


def search(request: SearchRequest, *, embedder: Embedder | None = None) -> SearchResponse:
    with SEARCH_SECONDS.time(), tracer.start_as_current_span("mnemosyne.search"):
        return _search(request, embedder)


def _search(request: SearchRequest, embedder: Embedder | None) -> SearchResponse:
    resolved = validate(request)
    embedder = embedder or get_embedder()
    if "vector" in resolved.legs and resolved.models - {embedder.model_id}:
        # A library of another model's vectors cannot be searched with this model's query vector:
        # refused, naming the library.
        vector_models.check_all(resolved.libraries, model_id=embedder.model_id)
    # The question as the libraries' profile and synonym sets read it (profiles/query_rules.py):
    # what their sets add, for both legs; the vector without the instructions the profile declares,
    # which blur it (the full-text leg weighs each word by its rarity already).
    prepared = resolved.rules.prepare(resolved.query)
    leg_query = legs.LegQuery(
        text=prepared.text,
        vector_text=prepared.vector_text,
        filters=resolved.filters,
        limit=max(request.offset + request.limit, MIN_CANDIDATES),
        embedder=embedder,
    )
    # Every read of the search from one database: a replica, when one will do (replicas.py).
    alias = replicas.read_alias()
    try:
        with replicas.reads_from(alias):
            response = _answer(resolved, leg_query)
    except DatabaseError as exc:
        if alias == DEFAULT_DB_ALIAS:
            raise
        # The replica failed mid-search: the primary answers this search and the next ones.
        replicas.mark_down(alias, exc)
        response = _answer(resolved, leg_query)
    response.prepared = prepared
    return response


def _answer(resolved: ResolvedSearch, leg_query: legs.LegQuery) -> SearchResponse:
    """Run the legs, fuse, hydrate and shape: everything read from replicas.reading()."""
    request = resolved.request
    query = resolved.query
    window = request.offset + request.limit
    not_run: dict[str, str] = {}
    wanted = list(resolved.legs)
    if "graph" in wanted and len(wanted) > 1 and settings.SEARCH_GRAPH_WEIGHT == 0:
        wanted.remove("graph")
        not_run["graph"] = (
            "its fusion weight is 0 (SEARCH_GRAPH_WEIGHT); ask for search_types=['graph'] alone"
        )
    # The documents the question names (its organisation, kind, period): their chunks are searched
    # again for the rest of the question (document_legs.py), as two more legs.
    rules = resolved.rules
    named = (
        named_documents(
            leg_query.text,
            leg_query.filters,
            latest=rules.versions and periods.wants_latest(query),
            versions=rules.versions,
        )
        if resolved.identified
        # No document in scope has an identity: none can be named (and no statement is spent on it).
        else NamedDocuments(content=leg_query.text)
    )
    leg_query = replace(
        leg_query,
        named_items=named.best(),
        named_text=named.content,
        named_vector_text=rules.content(named.content),
    )
    if leg_query.named_items:
        wanted += [f"named_{leg}" for leg in ("vector", "fulltext") if leg in wanted]
    found_by_leg, leg_seconds = leg_runs.run(wanted, leg_query, not_run)
    fused = fuse(found_by_leg, alpha=request.alpha)
    fused, added, located = evidence.with_units(fused, named, leg_query, query)
    scores = {leg: dict(found) for leg, found in found_by_leg.items()}
    # Hydrate more than the page so collapsed duplicates can be replaced from below.
    head_size = window * 2 if request.collapse_duplicates else window
    if request.rerank and get_reranker() is not None:
        head_size = max(head_size, settings.RERANK_TOP_N)
    ranked, members = fused, {}
    if request.group_by is not None:
        # Grouped where the chunks are (read for the evidence already): each group (a page, a
        # document) is its best chunk, which alone is hydrated, collapsed and shaped below.
        by_key = {entry.key: entry for entry in fused[: evidence.UNIT_POOL]}
        heads = group_heads(list(by_key), located, request.group_by)
        members = dict(heads)
        ranked = [by_key[key] for key, _ in heads]
    head = ranked[:head_size]
    chunks = legs.hydrate(
        [entry.key for entry in head],
        with_embeddings=request.diversity is not None,
    )
    hits = [
        RankedHit(
            chunk=chunks[entry.key],
            score=entry.score,
            legs={leg: LegHit(rank=rank, score=scores[leg][entry.key]) for leg, rank in entry.ranks.items()},
            document_score=added.document.get(entry.key),
            page_score=added.page.get(entry.key),
        )
        for entry in head
        if entry.key in chunks
    ]
    if request.collapse_duplicates:
        kept, folded = collapse_near_duplicates([hit.chunk.text_preview for hit in hits])
        hits = [
            replace(hits[i], duplicates=[hits[j].chunk.uid for j in folded[i]]) if i in folded else hits[i]
            for i in kept
        ]
    rerank = rerank_hits(query, hits, requested=request.rerank)
    hits = rerank.hits
    if request.diversity is not None and hits:
        order = maximal_marginal_relevance(
            [hit.score if hit.rerank_score is None else hit.rerank_score for hit in hits],
            _vectors([hit.chunk for hit in hits]),
            diversity=request.diversity,
            limit=window,
        )
        hits = [hits[i] for i in order]
    if request.group_by is not None:
        hits = [
            replace(hit, grouped=[located[key].uid for key in members[hit.chunk.id]])
            if members[hit.chunk.id]
            else hit
            for hit in hits
        ]
    page = hits[request.offset : window]
    if request.explain:
        page = _explained(page, leg_query)
    return SearchResponse(
        hits=page,
        legs_run=[leg for leg in found_by_leg if not leg.startswith("named_")],
        legs_not_run=not_run,
        rerank_applied=rerank.applied,
        rerank_note=rerank.note,
        fusion=describe_fusion(request.alpha),
        # Beyond the page: more hits, groups or chunks than it shows (in a grouped ranking, the
        # chunks below the head's may be more groups).
        more=len(hits) > window
        or len(ranked) > len(head)
        or (request.group_by is not None and len(fused) > evidence.UNIT_POOL),
        leg_seconds=leg_seconds,
        rules=rules,
        named=named,
    )


def _explained(page: list[RankedHit], leg_query: legs.LegQuery) -> list[RankedHit]:
    """The hits with what their full-text and graph scores are made of (leg_parts.py)."""
    of_leg = {leg: [hit.chunk.id for hit in page if leg in hit.legs] for leg in ("fulltext", "graph")}
    terms = leg_parts.term_shares(leg_query.text, leg_query.filters, of_leg["fulltext"])
    concepts = (
        leg_parts.concept_shares(leg_query.text, leg_query.filters, of_leg["graph"])
        if of_leg["graph"]
        else {}
    )
    return [
        replace(hit, term_shares=terms.get(hit.chunk.id, {}), concept_shares=concepts.get(hit.chunk.id, {}))
        for hit in page
    ]


def _vectors(chunks: Sequence[HitChunk]) -> np.ndarray:
    """The chunks' vectors as rows of one matrix (zeros for a chunk without one)."""
    width = max((len(chunk.embedding) for chunk in chunks if chunk.embedding is not None), default=1)
    matrix = np.zeros((len(chunks), width))
    for row, chunk in enumerate(chunks):
        if chunk.embedding is not None:
            matrix[row] = chunk.embedding
    return matrix


def fusion_alpha(requested: float | None) -> float | None:
    """The vector leg's weight in relative-score fusion: the one asked for, else the configured
    one (SEARCH_ALPHA) when SEARCH_FUSION is "relative"; None means weighted RRF."""
    if requested is None and settings.SEARCH_FUSION == "relative":
        return settings.SEARCH_ALPHA
    return requested


def describe_fusion(alpha: float | None) -> str:
    alpha = fusion_alpha(alpha)
    if alpha is not None:
        return f"relative score fusion, alpha={alpha:g} (vector weight)"
    return f"reciprocal rank fusion, k={settings.SEARCH_RRF_K}"
