"""SearchService: the one entry point every caller (MCP tool, command, test) uses.

Each leg applies the filters itself (AND-combined) and returns chunk ids best
first; the legs are fused (relative-score fusion by default, or reciprocal rank
fusion), then near-duplicates are collapsed, the head reranked when a reranker is
configured, and MMR applied when diversity is asked for.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from django.conf import settings
from django.db import close_old_connections

from mnemosyne.embedding import INDEX_DIMENSIONS, Embedder, get_embedder
from mnemosyne.graph import GraphError
from mnemosyne.library import selectors
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import Chunk
from mnemosyne.library.services import validate_library_type
from mnemosyne.search import legs
from mnemosyne.search.fusion import Fused, relative_score_fusion, weighted_rrf
from mnemosyne.search.rerank import get_reranker
from mnemosyne.search.reranking import rerank_hits
from mnemosyne.search.shaping import collapse_near_duplicates, maximal_marginal_relevance

logger = logging.getLogger(__name__)

SEARCH_TYPES = ("vector", "fulltext", "graph")
DEFAULT_LIMIT = 20
MAX_LIMIT = 100
MAX_QUERY_CHARS = 20_000
MAX_WINDOW = 500
# Each leg returns this many candidates (at least `limit`) for fusion.
MIN_CANDIDATES = 50


@dataclass(frozen=True)
class SearchRequest:
    query: str
    library_uid: str | None = None
    library_type: str | None = None
    collection_uid: str | None = None
    limit: int = DEFAULT_LIMIT
    search_types: Sequence[str] = SEARCH_TYPES
    rerank: bool = True
    include_images: bool = True
    # None: the configured default fusion. A number in [0, 1]: relative-score fusion weighting
    # the vector leg by alpha and the full-text leg by 1 - alpha (Weaviate's hybrid alpha).
    alpha: float | None = None
    # Skip this many results (paging); the window offset + limit is at most MAX_WINDOW.
    offset: int = 0
    # None: relevance order. A number in [0, 1]: maximal marginal relevance, trading relevance
    # for diversity (0 = relevance only).
    diversity: float | None = None
    collapse_duplicates: bool = True


@dataclass(frozen=True)
class LegHit:
    rank: int
    score: float


@dataclass(frozen=True)
class SearchHit:
    chunk: Chunk
    score: float
    legs: dict[str, LegHit]
    rerank_score: float | None = None
    # uids of near-identical chunks folded into this one
    duplicates: list[str] = field(default_factory=list)


@dataclass
class SearchResponse:
    hits: list[SearchHit]
    legs_run: list[str]
    legs_not_run: dict[str, str] = field(default_factory=dict)
    rerank_applied: bool = False
    rerank_note: str = ""
    fusion: str = ""
    # Whether results beyond this page may exist.
    more: bool = False


def validate(request: SearchRequest) -> SearchRequest:
    query = request.query.strip()
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
    # Unknown uids are an error naming them, not an empty result.
    if request.library_uid is not None:
        selectors.get_library(request.library_uid)
    if request.collection_uid is not None:
        selectors.get_collection(request.collection_uid)
    return request


def fuse(found_by_leg: dict[str, list[tuple[int, float]]], *, alpha: float | None) -> list[Fused[int]]:
    """Fuse the legs: relative-score fusion when alpha is given or configured, else weighted RRF.

    A single leg keeps its own order, with its scores normalised to [0, 1].
    """
    if len(found_by_leg) == 1:
        return relative_score_fusion(found_by_leg, dict.fromkeys(found_by_leg, 1.0))
    if alpha is None and settings.SEARCH_FUSION == "relative":
        alpha = settings.SEARCH_ALPHA
    if alpha is not None:
        weights = {"vector": alpha, "fulltext": 1.0 - alpha, "graph": settings.SEARCH_GRAPH_WEIGHT}
        return relative_score_fusion(found_by_leg, weights)
    rankings = {leg: [chunk_id for chunk_id, _ in found] for leg, found in found_by_leg.items()}
    rrf_weights = {"graph": settings.SEARCH_GRAPH_WEIGHT}
    return weighted_rrf(rankings, rrf_weights, k=settings.SEARCH_RRF_K)


def search(request: SearchRequest, *, embedder: Embedder | None = None) -> SearchResponse:
    validate(request)
    query = request.query.strip()
    filters = legs.Filters.resolve(
        library_uid=request.library_uid,
        library_type=request.library_type,
        collection_uid=request.collection_uid,
        include_images=request.include_images,
    )
    window = request.offset + request.limit
    candidates = max(window, MIN_CANDIDATES)
    found_by_leg: dict[str, list[tuple[int, float]]] = {}
    not_run: dict[str, str] = {}
    wanted = list(dict.fromkeys(request.search_types))
    if "graph" in wanted and len(wanted) > 1 and settings.SEARCH_GRAPH_WEIGHT == 0:
        wanted.remove("graph")
        not_run["graph"] = (
            "its fusion weight is 0 (SEARCH_GRAPH_WEIGHT); ask for search_types=['graph'] alone"
        )
    # The lexical and graph legs run in other threads while the query is embedded.
    parallel = settings.SEARCH_PARALLEL_LEGS
    pending: dict[str, Future[list[tuple[int, float]]]] = {}
    for leg, run in (("fulltext", legs.fulltext_leg), ("graph", legs.graph_leg)):
        if leg in wanted and parallel:
            pending[leg] = _LEG_POOL.submit(_in_thread, run, query, filters, candidates)
    for leg in wanted:
        try:
            if leg == "vector":
                vector = (embedder or get_embedder()).embed_query(query)
                found_by_leg[leg] = legs.vector_leg(vector, filters, candidates)
            elif leg in pending:
                found_by_leg[leg] = pending[leg].result()
            else:
                found_by_leg[leg] = (legs.fulltext_leg if leg == "fulltext" else legs.graph_leg)(
                    query, filters, candidates
                )
        except GraphError as exc:
            # The graph is an optional signal: report it and go on with the other legs.
            logger.warning("graph leg failed: %s", exc)
            not_run[leg] = f"the concept graph is unavailable ({exc})"

    fused = fuse(found_by_leg, alpha=request.alpha)
    scores = {leg: dict(found) for leg, found in found_by_leg.items()}
    # Hydrate more than the page so collapsed duplicates can be replaced from below.
    head_size = window * 2 if request.collapse_duplicates else window
    if request.rerank and get_reranker() is not None:
        head_size = max(head_size, settings.RERANK_TOP_N)
    head = fused[:head_size]
    chunks = legs.hydrate([entry.key for entry in head], with_embeddings=request.diversity is not None)
    hits = [
        SearchHit(
            chunk=chunks[entry.key],
            score=entry.score,
            legs={leg: LegHit(rank=rank, score=scores[leg][entry.key]) for leg, rank in entry.ranks.items()},
        )
        for entry in head
        if entry.key in chunks
    ]
    if request.collapse_duplicates:
        kept, folded = collapse_near_duplicates([hit.chunk.text_preview for hit in hits])
        hits = [replace(hits[i], duplicates=[hits[j].chunk.uid for j in folded.get(i, [])]) for i in kept]
    rerank = rerank_hits(query, hits, requested=request.rerank)
    hits = rerank.hits
    if request.diversity is not None and hits:
        order = maximal_marginal_relevance(
            [hit.score if hit.rerank_score is None else hit.rerank_score for hit in hits],
            [_vector(hit.chunk) for hit in hits],
            diversity=request.diversity,
            limit=window,
        )
        hits = [hits[i] for i in order]
    page = hits[request.offset : window]
    return SearchResponse(
        hits=page,
        legs_run=list(found_by_leg),
        legs_not_run=not_run,
        rerank_applied=rerank.applied,
        rerank_note=rerank.note,
        fusion=describe_fusion(request.alpha),
        more=len(hits) > window or len(fused) > len(head),
    )


def _vector(chunk: Chunk) -> list[float]:
    return [0.0] * INDEX_DIMENSIONS if chunk.embedding is None else list(chunk.embedding)


_LEG_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="search-leg")


def _in_thread(
    leg: Callable[[str, legs.Filters, int], list[tuple[int, float]]],
    query: str,
    filters: legs.Filters,
    limit: int,
) -> list[tuple[int, float]]:
    # Pool threads keep their own database connection; drop it when stale, as a request would.
    close_old_connections()
    return leg(query, filters, limit)


def describe_fusion(alpha: float | None) -> str:
    if alpha is None and settings.SEARCH_FUSION == "relative":
        alpha = settings.SEARCH_ALPHA
    if alpha is not None:
        return f"relative score fusion, alpha={alpha:g} (vector weight)"
    return f"reciprocal rank fusion, k={settings.SEARCH_RRF_K}"
