"""Collection tools: get_collection_config (how a collection is indexed) and list_topics (its headings)."""

from django.conf import settings
from pydantic import BaseModel, Field

from access.principal import Principal
from mcp_server.cursors import Page
from mcp_server.tools.schemas import NEXT_CURSOR, CursorArgument, LibraryRef
from mcp_server.tools.spec import Arguments, ToolSpec
from mnemosyne.embedding import get_embedder
from mnemosyne.ingestion.outcomes import ingest_config_signature
from mnemosyne.library import selectors, vector_indexes, vector_models
from mnemosyne.library.models import Library
from mnemosyne.search.types import DEFAULT_LIMIT, SEARCH_TYPES


class VectorIndex(BaseModel):
    kind: str = Field(description="The approximate nearest-neighbour index: hnsw.")
    distance: str = Field(description="The vector distance: cosine.")
    m: int = Field(description="HNSW links per node.")
    ef_construction: int = Field(description="HNSW candidate list size while building.")
    ef_search: int = Field(description="HNSW candidate list size per query (SEARCH_HNSW_EF_SEARCH).")


class EmbeddingConfig(BaseModel):
    model: str = Field(description="The embedding model (EMBEDDING_MODEL).")
    dimensions: int = Field(description="Length of each chunk vector.")
    index: VectorIndex


class ChunkingConfig(BaseModel):
    max_tokens: int = Field(description="Upper bound of a chunk, in the embedding model's word pieces.")
    overlap_tokens: int = Field(description="Text repeated between consecutive chunks.")
    structure_aware: bool = Field(description="Chunks follow headings, pages and paragraphs.")


class SearchDefaults(BaseModel):
    limit: int = Field(description="Results per search page when limit is omitted.")
    search_types: list[str] = Field(description="The legs run when search_types is omitted.")
    fusion: str = Field(description="How legs are fused when alpha is omitted: rrf or relative.")
    rrf_k: int = Field(description="The RRF constant k.")
    alpha: float = Field(description="Vector weight of relative fusion (SEARCH_ALPHA).")
    graph_weight: float = Field(description="Weight of the concept-graph leg in fusion.")
    graph_hops: int = Field(description="Concept expansion depth of the graph leg.")
    bm25_k1: float
    bm25_b: float
    rerank_configured: bool = Field(
        description="Whether a reranker is set up (search's rerank=true uses it)."
    )
    rerank_top_n: int = Field(description="How many fused results the reranker rescores.")
    response_token_budget: int = Field(description="A search page is cut to about this many tokens.")


class CollectionCounts(BaseModel):
    items: int = Field(description="Items in the collection, whatever their status.")
    items_by_status: dict[str, int] = Field(description="Items per embedding_status (pending … failed).")
    chunks: int
    image_chunks: int
    stale_items: int = Field(
        description="Complete items indexed under another model or chunking setting; re-ingest to update."
    )


class CollectionConfig(BaseModel):
    uid: str
    name: str
    description: str
    library: LibraryRef
    embedding: EmbeddingConfig
    chunking: ChunkingConfig
    search_defaults: SearchDefaults
    counts: CollectionCounts


class CollectionConfigList(BaseModel):
    collections: list[CollectionConfig] = Field(description="One entry, or every collection when none named.")


def _vector_index(dimensions: int) -> VectorIndex:
    """The dimension's index as built (rebuild_vector_index may have changed it), else as it will be."""
    built = vector_indexes.parameters(dimensions) or vector_indexes.BuildParameters(
        vector_models.HNSW_M, vector_models.HNSW_EF_CONSTRUCTION
    )
    return VectorIndex(
        kind="hnsw",
        distance="cosine",
        m=built.m,
        ef_construction=built.ef_construction,
        ef_search=settings.SEARCH_HNSW_EF_SEARCH,
    )


class GetCollectionConfigArguments(Arguments):
    collection_uid: str | None = Field(
        default=None, description="The collection (uid from list_collections); omit for all of them."
    )


def get_collection_config(caller: Principal, args: GetCollectionConfigArguments) -> CollectionConfigList:
    embedder = get_embedder()
    overviews = selectors.collection_overviews(
        collection_uid=args.collection_uid,
        ingest_config=lambda library_type: ingest_config_signature(embedder, library_type),
    )
    # Settings are process-wide today, so every collection shares them but for the model its library
    # was embedded with (none yet: this server's) and that model's vector index; the counts are its own.
    indexes: dict[int, VectorIndex] = {}

    def embedding(library: Library) -> EmbeddingConfig:
        if library.embedding_model and library.embedding_dimensions:
            model, dimensions = library.embedding_model, library.embedding_dimensions
        else:
            model, dimensions = embedder.model_id, embedder.dim
        if dimensions not in indexes:
            indexes[dimensions] = _vector_index(dimensions)
        return EmbeddingConfig(model=model, dimensions=dimensions, index=indexes[dimensions])

    chunking = ChunkingConfig(
        max_tokens=settings.CHUNK_MAX_TOKENS,
        overlap_tokens=settings.CHUNK_OVERLAP_TOKENS,
        structure_aware=True,
    )
    defaults = SearchDefaults(
        limit=DEFAULT_LIMIT,
        search_types=list(SEARCH_TYPES),
        fusion=settings.SEARCH_FUSION,
        rrf_k=settings.SEARCH_RRF_K,
        alpha=settings.SEARCH_ALPHA,
        graph_weight=settings.SEARCH_GRAPH_WEIGHT,
        graph_hops=settings.SEARCH_GRAPH_HOPS,
        bm25_k1=settings.SEARCH_BM25_K1,
        bm25_b=settings.SEARCH_BM25_B,
        rerank_configured=bool(settings.RERANK_URL or settings.RERANK_MODEL_PATH),
        rerank_top_n=settings.RERANK_TOP_N,
        response_token_budget=settings.SEARCH_RESPONSE_TOKEN_BUDGET,
    )
    return CollectionConfigList(
        collections=[
            CollectionConfig(
                uid=o.collection.uid,
                name=o.collection.name,
                description=o.collection.description,
                library=LibraryRef(uid=o.collection.library.uid, name=o.collection.library.name),
                embedding=embedding(o.collection.library),
                chunking=chunking,
                search_defaults=defaults,
                counts=CollectionCounts(
                    items=sum(o.items_by_status.values()),
                    items_by_status=o.items_by_status,
                    chunks=o.chunk_count,
                    image_chunks=o.image_chunk_count,
                    stale_items=o.stale_item_count,
                ),
            )
            for o in overviews
        ]
    )


def render_config(result: CollectionConfigList) -> str:
    if not result.collections:
        return "No collections."
    lines = []
    for c in result.collections:
        e, k, d, n = c.embedding, c.chunking, c.search_defaults, c.counts
        lines.append(
            f"[{c.uid}] {c.library.name} / {c.name}: {n.items} items ({n.items_by_status.get('complete', 0)} "
            f"complete), {n.chunks} chunks; {e.model} ({e.dimensions}-d, {e.index.kind} {e.index.distance}); "
            f"chunks ≤ {k.max_tokens} tokens, overlap {k.overlap_tokens}; search {'+'.join(d.search_types)} "
            f"fused by {d.fusion}, rerank {'on' if d.rerank_configured else 'off'}"
        )
    return "\n".join(lines)


class TopicInfo(BaseModel):
    heading: str = Field(
        description="A section heading path, cut to `depth` levels, e.g. 'Backups › Restoring'."
    )
    item_count: int = Field(description="Items with chunks under this heading.")
    chunk_count: int = Field(description="Chunks under this heading.")


class TopicList(BaseModel):
    topics: list[TopicInfo] = Field(description="Most chunks first (ties by heading).")
    total_topics: int = Field(description="Headings in scope, on every page.")
    total_items: int = Field(description="Items in scope.")
    total_chunks: int = Field(description="Chunks in scope, with or without a heading.")
    unsectioned_chunks: int = Field(description="Chunks under no heading (not in any topic).")
    next_cursor: str | None = Field(description=NEXT_CURSOR)


class ListTopicsArguments(Arguments):
    library_uid: str | None = Field(default=None, description="Only this library (uid from list_libraries).")
    collection_uid: str | None = Field(
        default=None, description="Only this collection (uid from list_collections)."
    )
    depth: int = Field(
        default=2, ge=1, le=4, description="Heading levels to keep: 1 = top headings only, up to 4."
    )
    limit: int = Field(default=100, ge=1, le=500, description="How many topics per page, 1-500.")
    cursor: CursorArgument = None


def list_topics(caller: Principal, args: ListTopicsArguments, page: Page) -> TopicList:
    offset, limit = page.offset, args.limit
    found = selectors.topics(
        library_uid=args.library_uid,
        collection_uid=args.collection_uid,
        depth=args.depth,
        limit=limit,
        offset=offset,
    )
    return TopicList(
        topics=[
            TopicInfo(heading=t.heading, item_count=t.item_count, chunk_count=t.chunk_count)
            for t in found.page
        ],
        total_topics=found.topic_count,
        total_items=found.item_count,
        total_chunks=found.chunk_count,
        unsectioned_chunks=found.unsectioned_chunk_count,
        next_cursor=page.next_cursor(offset + limit if offset + limit < found.topic_count else None),
    )


def render_topics(result: TopicList) -> str:
    lines = [
        f"{result.total_topics} topics over {result.total_items} items and {result.total_chunks} chunks "
        f"({result.unsectioned_chunks} under no heading)."
    ]
    lines += [f"- {t.heading}: {t.chunk_count} chunks in {t.item_count} items" for t in result.topics]
    if result.next_cursor:
        lines.append("More: call list_topics again with cursor=next_cursor.")
    return "\n".join(lines)


GET_COLLECTION_CONFIG = ToolSpec(
    name="get_collection_config",
    handler=get_collection_config,
    arguments=GetCollectionConfigArguments,
    result=CollectionConfigList,
    title="Collection configuration",
    description=(
        "How a collection is indexed and searched: embedding model and dimensions, vector index, chunking "
        "settings, search defaults (legs, fusion, rerank), and counts of items by status, chunks and items "
        "needing re-ingestion. Omit collection_uid for every collection. Use it to explain search behaviour "
        "or to check that ingestion finished."
    ),
    render=render_config,
)
LIST_TOPICS = ToolSpec(
    name="list_topics",
    handler=list_topics,
    arguments=ListTopicsArguments,
    result=TopicList,
    pages=True,
    title="List topics",
    description=(
        "The section headings found in the documents (heading paths cut to `depth` levels), each with how "
        "many items and chunks sit under it, plus totals; optionally within one library or collection. "
        "Use it for a table of contents of what is indexed, then search within a topic. Pages with "
        "next_cursor."
    ),
    render=render_topics,
)
