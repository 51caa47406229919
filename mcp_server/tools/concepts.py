"""Concept tools: list_concepts (most mentioned) and get_concept_neighbors (co-occurring)."""

from pydantic import BaseModel, Field

from access.principal import Principal
from mcp_server.cursors import Page
from mcp_server.tools.schemas import NEXT_CURSOR, CursorArgument
from mcp_server.tools.spec import Arguments, ToolSpec
from mnemosyne.library import concept_reads


class ConceptInfo(BaseModel):
    concept: str = Field(
        description="The concept's key (lowercase, plural folded); pass it to get_concept_neighbors."
    )
    label: str = Field(description="A readable form of the concept as it appears in the text.")
    mention_count: int = Field(description="How many chunks mention it (within the filters asked for).")


class ConceptList(BaseModel):
    concepts: list[ConceptInfo] = Field(description="Most-mentioned first (ties by concept).")
    next_cursor: str | None = Field(description=NEXT_CURSOR)


class ListConceptsArguments(Arguments):
    library_uid: str | None = Field(
        default=None, description="Only count mentions in this library (uid from list_libraries)."
    )
    collection_uid: str | None = Field(
        default=None, description="Only count mentions in this collection (uid from list_collections)."
    )
    limit: int = Field(default=50, ge=1, le=500, description="How many concepts per page, 1-500.")
    cursor: CursorArgument = None


def list_concepts(caller: Principal, args: ListConceptsArguments, page: Page) -> ConceptList:
    limit = args.limit
    found = concept_reads.top_concepts(
        library_uid=args.library_uid, collection_uid=args.collection_uid, limit=limit + 1, offset=page.offset
    )
    return ConceptList(
        concepts=[
            ConceptInfo(concept=c.key, label=c.label, mention_count=c.mention_count) for c in found[:limit]
        ],
        next_cursor=page.next_cursor(page.offset + limit if len(found) > limit else None),
    )


def render_concepts(result: ConceptList) -> str:
    if not result.concepts:
        return "No concepts (nothing ingested in this scope yet)."
    lines = [f"{c.label} ({c.concept}): {c.mention_count} chunks" for c in result.concepts]
    if result.next_cursor:
        lines.append("More: call list_concepts again with cursor=next_cursor.")
    return "\n".join(lines)


class RelatedConcept(BaseModel):
    concept: str = Field(description="The related concept's key.")
    label: str = Field(description="A readable form of it.")
    weight: int = Field(description="How many chunks mention both concepts; higher is more related.")
    example_chunk_uids: list[str] = Field(description="Up to three chunks mentioning both (for get_chunk).")


class ConceptNeighbors(BaseModel):
    concept: str = Field(description="The key the concept was looked up by (normalised from the argument).")
    neighbors: list[RelatedConcept] = Field(description="Strongest first (ties by concept).")


class GetConceptNeighborsArguments(Arguments):
    concept: str = Field(
        min_length=1,
        max_length=200,
        description="A concept from list_concepts, or in your own words (e.g. 'neural networks').",
    )
    limit: int = Field(default=20, ge=1, le=100, description="How many related concepts, 1-100.")


def get_concept_neighbors(caller: Principal, args: GetConceptNeighborsArguments) -> ConceptNeighbors:
    key, related = concept_reads.related_concepts(args.concept, limit=args.limit)
    return ConceptNeighbors(
        concept=key,
        neighbors=[
            RelatedConcept(
                concept=r.key, label=r.label, weight=r.weight, example_chunk_uids=r.example_chunk_uids
            )
            for r in related
        ],
    )


def render_neighbors(result: ConceptNeighbors) -> str:
    if not result.neighbors:
        return f"'{result.concept}' is known but co-occurs with no other concept."
    lines = [f"Concepts related to '{result.concept}' (weight = chunks mentioning both):"]
    lines += [
        f"- {n.label} ({n.concept}): {n.weight}; e.g. {', '.join(n.example_chunk_uids)}"
        for n in result.neighbors
    ]
    return "\n".join(lines)


LIST_CONCEPTS = ToolSpec(
    name="list_concepts",
    handler=list_concepts,
    arguments=ListConceptsArguments,
    result=ConceptList,
    pages=True,
    title="List concepts",
    description=(
        "The most-mentioned concepts (key phrases extracted from the chunks at ingestion) with how many "
        "chunks mention each, optionally within one library or collection. Use it to see what a library "
        "covers before searching, or to pick a concept for get_concept_neighbors. Pages with next_cursor."
    ),
    render=render_concepts,
)
GET_CONCEPT_NEIGHBORS = ToolSpec(
    name="get_concept_neighbors",
    handler=get_concept_neighbors,
    arguments=GetConceptNeighborsArguments,
    result=ConceptNeighbors,
    title="Related concepts",
    description=(
        "Concepts that co-occur with a concept in the same chunks, strongest first, each with its weight "
        "(chunks mentioning both) and example chunk_uids to read with get_chunk. Use it to widen a search "
        "with related terms or to map a topic. The concept is matched after normalisation (case, "
        "plurals); an unknown concept is an error naming it."
    ),
    render=render_neighbors,
)
