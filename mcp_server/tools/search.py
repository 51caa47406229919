"""The `search` tool: hybrid retrieval over the libraries."""

from typing import Annotated, Literal

from pydantic import Field

from mcp_server.tools.registry import ToolSpec
from mcp_server.tools.schemas import (
    CollectionRef,
    ItemRef,
    LegScore,
    LibraryRef,
    RerankInfo,
    SearchHit,
    SearchResult,
)
from mnemosyne.search import service

LibraryTypeName = Literal["general", "documentation", "research", "books", "legal", "notes", "code"]
SearchType = Literal["vector", "fulltext", "graph"]


def search(
    query: Annotated[str, Field(description="What to look for, in natural language or keywords.")],
    library_uid: Annotated[
        str | None, Field(description="Only search this library (uid from list_libraries).")
    ] = None,
    library_type: Annotated[
        LibraryTypeName | None, Field(description="Only search libraries of this type.")
    ] = None,
    collection_uid: Annotated[
        str | None, Field(description="Only search this collection (uid from list_collections).")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=100, description="How many results to return, 1-100.")] = 20,
    rerank: Annotated[
        bool, Field(description="Rerank the fused results when a reranker is configured.")
    ] = True,
    include_images: Annotated[
        bool, Field(description="Include image chunks (captions) in the results.")
    ] = True,
    search_types: Annotated[
        list[SearchType],
        Field(description="Legs to run and fuse: vector (semantic), fulltext (keywords), graph (concepts)."),
    ] = ["vector", "fulltext", "graph"],  # noqa: B006  (pydantic copies defaults)
) -> SearchResult:
    response = service.search(
        service.SearchRequest(
            query=query,
            library_uid=library_uid,
            library_type=library_type,
            collection_uid=collection_uid,
            limit=limit,
            search_types=search_types,
            rerank=rerank,
            include_images=include_images,
        )
    )
    return SearchResult(
        results=[
            SearchHit(
                chunk_uid=hit.chunk.uid,
                text_preview=hit.chunk.text_preview,
                score=round(hit.score, 6),
                library=LibraryRef(uid=hit.chunk.library.uid, name=hit.chunk.library.name),
                collection=CollectionRef(uid=hit.chunk.collection.uid, name=hit.chunk.collection.name),
                item=ItemRef(uid=hit.chunk.item.uid, title=hit.chunk.item.title),
                section=hit.chunk.section_path,
                page=hit.chunk.page,
                char_start=hit.chunk.char_start,
                char_end=hit.chunk.char_end,
                legs={
                    leg: LegScore(rank=entry.rank, score=round(entry.score, 6))
                    for leg, entry in hit.legs.items()
                },
            )
            for hit in response.hits
        ],
        legs_run=response.legs_run,
        legs_not_run=response.legs_not_run,
        rerank=RerankInfo(requested=rerank, applied=response.rerank_applied, note=response.rerank_note),
    )


def render_search(result: SearchResult) -> str:
    lines = [f"{len(result.results)} results (legs: {', '.join(result.legs_run) or 'none'})."]
    for number, hit in enumerate(result.results, start=1):
        where = " › ".join(part for part in (hit.item.title, hit.section) if part)
        page = f", p. {hit.page}" if hit.page else ""
        preview = " ".join(hit.text_preview.split())[:160]
        lines.append(f"{number}. [{hit.chunk_uid}] {where}{page} (score {hit.score:.4f})\n   {preview}")
    for leg, reason in result.legs_not_run.items():
        lines.append(f"Not run: {leg}: {reason}.")
    if result.rerank.requested and not result.rerank.applied:
        lines.append(f"Rerank not applied: {result.rerank.note}.")
    return "\n".join(lines)


SEARCH = ToolSpec(
    fn=search,
    name="search",
    title="Search the libraries",
    description=(
        "Hybrid search (semantic vectors + keyword full text, fused) over ingested documents. "
        "Returns ranked chunks with chunk_uid, a preview, and citation data (library, collection, item, "
        "section, page, character offsets). Use get_chunk with a chunk_uid for the full text, and cite "
        "chunk_uids in your answer. Narrow with library_uid / collection_uid from list_libraries / "
        "list_collections."
    ),
    render=render_search,
)
