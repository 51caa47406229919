"""Structured results of the MCP tools (each tool's outputSchema), and shared argument types."""

from typing import Annotated

from pydantic import BaseModel, Field

NEXT_CURSOR = "Pass as cursor (with the same arguments) for the next page; null on the last page."

CursorArgument = Annotated[
    str | None,
    Field(description="next_cursor from the previous page of the same listing; omit for the first page."),
]


class LibraryRef(BaseModel):
    uid: str
    name: str


class CollectionRef(BaseModel):
    uid: str
    name: str


class ItemRef(BaseModel):
    uid: str
    title: str


class LegScore(BaseModel):
    rank: int = Field(description="1-based rank of the chunk in this leg.")
    score: float = Field(description="The leg's own score (cosine similarity, or full-text rank).")


class Explain(BaseModel):
    fused_score: float = Field(description="Score after fusing the legs.")
    rerank_score: float | None = Field(description="The reranker's score, when reranking was applied.")
    legs: dict[str, LegScore] = Field(description="Rank and score of the chunk in each leg that found it.")
    document: float | None = Field(
        default=None,
        description="How well the chunk's document matches the organisation, kind and period the query "
        "names (0-1), weighted into the fused score.",
    )
    page: float | None = Field(
        default=None,
        description="The evidence of the chunk's page: its full text and its best chunks (0-1), weighted "
        "into the fused score.",
    )
    terms: dict[str, float] | None = Field(
        default=None,
        description="Each query term (stemmed, as the index holds it) and its share of the full-text "
        "(BM25) score; the shares add up to that leg's score.",
    )
    concepts: dict[str, float] | None = Field(
        default=None,
        description="The concepts through which the graph leg found the chunk, each with what it added.",
    )


class SearchHit(BaseModel):
    chunk_uid: str
    kind: str = Field(description="text, or image (then the preview is the image's caption).")
    text_preview: str
    score: float = Field(description="Fused score; higher is better.")
    library: LibraryRef
    collection: CollectionRef
    item: ItemRef
    section: str = Field(description="Heading path of the chunk, e.g. 'Design › Naming'; empty if none.")
    page: int | None = Field(description="1-based page number, or null when the source has no pages.")
    page_end: int | None = Field(
        default=None, description="The last page, when the chunk runs over a page break; else null."
    )
    ocr: bool = Field(default=False, description="The text was read by OCR from an image of the page.")
    char_start: int = Field(
        description="Offset of the chunk's first character in the item's normalised text."
    )
    char_end: int = Field(description="Offset just past the chunk's last character.")
    url: str = Field(
        description="Where a person opens this chunk at its passage (the console's citation viewer; "
        "they sign in there)."
    )
    explain: Explain | None = Field(default=None, description="Present when return_metadata has explain.")
    text: str | None = Field(default=None, description="Full chunk text, when return_metadata has text.")
    source: str | None = Field(default=None, description="Item path or URL, when return_metadata has source.")
    duplicates: list[str] | None = Field(
        default=None, description="uids of near-identical chunks folded into this one (return_metadata)."
    )
    grouped: list[str] | None = Field(
        default=None,
        description="With group_by: uids of the other chunks of this page or item that matched, best first.",
    )


class RerankInfo(BaseModel):
    requested: bool
    applied: bool
    note: str


class SynonymFired(BaseModel):
    set: str = Field(description="The synonym set: one its profile ships, or one of the library's own.")
    matched: str = Field(description="The words of the question the set matched.")
    added: list[str] = Field(description="The terms they brought, searched for beside the question.")


class NamedDocument(BaseModel):
    item_uid: str
    title: str
    words: list[str] = Field(
        description="The identity words of the question it matched (as the index holds them)."
    )
    score: float = Field(description="Its share of the question's identity weight (0-1).")


class QuestionRules(BaseModel):
    profile: str = Field(
        description="The profile whose rules ran: the libraries' own, or general when the libraries searched "
        "have different profiles."
    )
    profiles: list[str] = Field(description="The profiles of the libraries searched.")
    synonyms: list[SynonymFired] = Field(description="Each synonym rule that added terms to the question.")
    instructions_removed: list[str] = Field(
        description="Instructions the profile declares that the vector search left out of the question."
    )
    documents_named: list[NamedDocument] = Field(
        description="The documents the question's identity words name (organisation, kind, period …)."
    )


class SearchResult(BaseModel):
    results: list[SearchHit]
    next_cursor: str | None = Field(description="Pass as cursor (with the same arguments) for more results.")
    fusion: str = Field(description="How the legs were fused.")
    legs_run: list[str] = Field(description="Search legs that ran for this query.")
    legs_not_run: dict[str, str] = Field(description="Requested legs that did not run, with the reason.")
    rerank: RerankInfo
    leg_ms: dict[str, float] | None = Field(
        default=None,
        description="Milliseconds each leg took, when return_metadata has explain (named_ legs search "
        "within the documents the question names).",
    )
    rules: QuestionRules | None = Field(
        default=None,
        description="With explain: what the libraries' profile and synonym sets did to the question.",
    )


class ChunkItem(BaseModel):
    uid: str
    title: str
    source: str
    item_type: str


class LibraryInfo(BaseModel):
    uid: str
    name: str
    library_type: str
    description: str


class NeighbourChunk(BaseModel):
    chunk_uid: str
    ordinal: int
    section: str
    page: int | None
    text: str


class Location(BaseModel):
    page: int = Field(description="1-based page.")
    x0: float = Field(description="Left edge.")
    y0: float = Field(description="Bottom edge.")
    x1: float = Field(description="Right edge.")
    y1: float = Field(description="Top edge.")


class ChunkResult(BaseModel):
    chunk_uid: str
    kind: str = Field(description="text, or image (the image is returned as image content).")
    mime_type: str | None = Field(description="The image's type, for an image chunk.")
    text: str = Field(description="The chunk's full text (an image's caption and surrounding text).")
    ordinal: int = Field(description="0-based position of the chunk in its item.")
    section: str
    page: int | None
    page_end: int | None = Field(
        description="The last page, when the chunk runs over a page break; else null."
    )
    locations: list[Location] = Field(
        description="Where the chunk was printed, to highlight it: one box per line, in PDF points from the "
        "page's bottom left (an image file's OCR'd text: in the image's pixels). Empty when unknown."
    )
    ocr: bool = Field(description="The text was read by OCR from an image of the page.")
    ocr_confidence: float | None = Field(description="OCR: the recogniser's mean confidence (0-1).")
    char_start: int
    char_end: int
    item: ChunkItem
    collection: CollectionRef
    library: LibraryInfo
    previous_chunk_uid: str | None = Field(description="The chunk before this one in the item, if any.")
    next_chunk_uid: str | None = Field(description="The chunk after this one in the item, if any.")
    context_before: list[NeighbourChunk] = Field(description="Up to `context` chunks before, nearest last.")
    context_after: list[NeighbourChunk] = Field(description="Up to `context` chunks after, nearest first.")
    url: str = Field(
        description="Where a person opens this chunk at its passage (the console's citation viewer; "
        "they sign in there)."
    )


class LibraryList(BaseModel):
    libraries: list[LibraryInfo]
    next_cursor: str | None = Field(description=NEXT_CURSOR)


class CollectionInfo(BaseModel):
    uid: str
    name: str
    description: str
    library: LibraryRef


class CollectionList(BaseModel):
    collections: list[CollectionInfo]
    next_cursor: str | None = Field(description=NEXT_CURSOR)


class ItemInfo(BaseModel):
    uid: str
    title: str
    item_type: str
    chunk_count: int
    embedding_status: str = Field(description="pending, processing, complete or failed.")
    embedding_error: str = Field(description="Why ingestion failed; empty unless embedding_status is failed.")
    collection: CollectionRef
    organisation: str = Field(default="", description="The organisation it is from, when known.")
    doc_type: str = Field(default="", description="Its kind (10-K, 10-Q, 8-K, earnings release, paper, …).")
    date: str | None = Field(default=None, description="The date it speaks for (YYYY-MM-DD), when known.")
    period: str = Field(
        default="", description="The fiscal period it covers (FY2019, Q3 FY2023), when known."
    )


class ItemList(BaseModel):
    items: list[ItemInfo]
    total: int = Field(description="How many items match, on every page.")
    next_cursor: str | None = Field(description=NEXT_CURSOR)
