"""The `search` tool: hybrid retrieval over the libraries."""

from datetime import date
from typing import Literal

from django.conf import settings
from pydantic import Field

from access.principal import Principal
from mcp_server.cursors import Page
from mcp_server.tools.links import citation_url
from mcp_server.tools.schemas import (
    CollectionRef,
    Explain,
    ItemRef,
    LegScore,
    LibraryRef,
    NamedDocument,
    QuestionRules,
    RerankInfo,
    SearchHit,
    SearchResult,
    SynonymFired,
)
from mcp_server.tools.spec import ArgumentError, Arguments, ToolSpec
from mnemosyne.library.chunk_reads import chunk_text
from mnemosyne.library.selectors import item_names
from mnemosyne.search import service
from mnemosyne.search.filters import DocumentFilter
from mnemosyne.search.shaping import estimate_tokens, fit_budget

LibraryTypeName = Literal[
    "general", "filings", "documentation", "research", "books", "legal", "notes", "code"
]
# The documents a question names, shown with explain: at most this many.
NAMED_SHOWN = 5
SearchType = Literal["vector", "fulltext", "graph"]
MetadataField = Literal["explain", "text", "source", "duplicates"]


ISO_DATE = r"^\d{4}-\d{2}-\d{2}$"


class DocumentFilterArguments(Arguments):
    organisation: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Part of the organisation's name, or its trading symbol (list_items shows them).",
    )
    doc_type: str | None = Field(
        default=None,
        min_length=1,
        max_length=40,
        description="Kind of document: 10-K, 10-Q, 8-K, 20-F, earnings release, paper, manual, …",
    )
    period: str | None = Field(
        default=None,
        pattern=r"^(?:Q[1-4] )?(?:FY)?\d{4}$",
        description="Fiscal period: FY2019 (the year and its quarters) or Q3 FY2023 (that quarter).",
    )
    date_from: str | None = Field(
        default=None, pattern=ISO_DATE, description="Earliest document date (YYYY-MM-DD), inclusive."
    )
    date_to: str | None = Field(
        default=None, pattern=ISO_DATE, description="Latest document date (YYYY-MM-DD), inclusive."
    )


class SearchArguments(Arguments):
    query: str = Field(description="What to look for, in natural language or keywords.")
    library_uid: str | None = Field(
        default=None, description="Only search this library (uid from list_libraries)."
    )
    library_type: LibraryTypeName | None = Field(
        default=None, description="Only search libraries of this type."
    )
    collection_uid: str | None = Field(
        default=None, description="Only search this collection (uid from list_collections)."
    )
    limit: int = Field(
        default=20,
        ge=1,
        le=service.MAX_LIMIT,
        description=f"How many results to return, 1-{service.MAX_LIMIT}.",
    )
    rerank: bool = Field(default=True, description="Rerank the fused results when a reranker is configured.")
    include_images: bool = Field(default=True, description="Include image chunks (captions) in the results.")
    search_types: list[SearchType] = Field(
        default=["vector", "fulltext", "graph"],
        description="Legs to run and fuse: vector (semantic), fulltext (keywords), graph (concepts).",
    )
    alpha: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Hybrid weighting: 0 = keyword (BM25) only, 1 = semantic only, between = blend of "
        "normalised scores. Omit for the default fusion.",
    )
    diversity: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Trade relevance for variety (maximal marginal relevance), 0-1. Omit for none.",
    )
    documents: DocumentFilterArguments | None = Field(
        default=None,
        description="Only documents that are this (what list_items shows each is): organisation, doc_type, "
        "period, date_from/date_to. Every field given must hold.",
    )
    group_by: Literal["page", "item"] | None = Field(
        default=None,
        description="One result per page or per item (document), each its best chunk, with the others' uids "
        "in `grouped`. Omit for one ranked list of chunks.",
    )
    return_metadata: list[MetadataField] = Field(
        default=[],
        description="Extra fields per result: explain (each leg's rank and score), text (full chunk text "
        "instead of only the preview), source (item path or URL), duplicates (near-identical chunks "
        "folded in).",
    )
    cursor: str | None = Field(
        default=None,
        description="next_cursor from a previous call with the same arguments, for the next page.",
    )


def search(caller: Principal, args: SearchArguments, page: Page) -> SearchResult:
    response = service.search(
        service.SearchRequest(
            query=args.query,
            library_uid=args.library_uid,
            library_type=args.library_type,
            collection_uid=args.collection_uid,
            limit=args.limit,
            search_types=args.search_types,
            rerank=args.rerank,
            include_images=args.include_images,
            alpha=args.alpha,
            diversity=args.diversity,
            offset=page.offset,
            documents=_document_filter(args.documents),
            group_by=args.group_by,
            explain="explain" in args.return_metadata,
        )
    )
    extras: set[str] = set(args.return_metadata)
    hits = [_hit(hit, extras) for hit in response.hits]
    # Stay well under what clients accept in one tool result; the rest is a page away.
    kept = fit_budget(
        [estimate_tokens(hit.model_dump_json()) for hit in hits], settings.SEARCH_RESPONSE_TOKEN_BUDGET
    )
    more = kept < len(hits) or response.more
    next_offset = page.offset + kept
    return SearchResult(
        results=hits[:kept],
        next_cursor=page.next_cursor(next_offset if more and next_offset < service.MAX_WINDOW else None),
        legs_run=response.legs_run,
        legs_not_run=response.legs_not_run,
        fusion=response.fusion,
        rerank=RerankInfo(requested=args.rerank, applied=response.rerank_applied, note=response.rerank_note),
        leg_ms=(
            {leg: round(seconds * 1000, 1) for leg, seconds in response.leg_seconds.items()}
            if "explain" in extras
            else None
        ),
        rules=_rules(response) if "explain" in extras else None,
    )


def _rules(response: service.SearchResponse) -> QuestionRules:
    prepared, named = response.prepared, response.named
    scores = named.scores if named is not None else {}
    best = sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))[:NAMED_SHOWN]
    items = item_names([item_id for item_id, _ in best])
    return QuestionRules(
        profile=response.rules.profile.name,
        profiles=list(response.rules.profiles),
        synonyms=[
            SynonymFired(set=fired.set_name, matched=fired.matched, added=list(fired.added))
            for fired in (prepared.fired if prepared else ())
        ],
        instructions_removed=list(prepared.stripped if prepared else ()),
        documents_named=[
            NamedDocument(
                item_uid=items[item_id][0],
                title=items[item_id][1],
                words=list(named.words.get(item_id, ())) if named else [],
                score=round(score, 6),
            )
            for item_id, score in best
            if item_id in items
        ],
    )


def _document_filter(documents: DocumentFilterArguments | None) -> DocumentFilter | None:
    if documents is None:
        return None
    dates: dict[str, date | None] = {}
    for name in ("date_from", "date_to"):
        value = getattr(documents, name)
        try:
            dates[name] = date.fromisoformat(value) if value else None
        except ValueError:
            raise ArgumentError(f"documents.{name}", f"{value!r} is not a date") from None
    return DocumentFilter(
        organisation=documents.organisation,
        doc_type=documents.doc_type,
        period=documents.period,
        date_from=dates["date_from"],
        date_to=dates["date_to"],
    )


def _hit(hit: service.RankedHit, extras: set[str]) -> SearchHit:
    chunk = hit.chunk
    return SearchHit(
        chunk_uid=chunk.uid,
        kind=chunk.kind,
        text_preview=chunk.text_preview,
        score=round(hit.score if hit.rerank_score is None else hit.rerank_score, 6),
        library=LibraryRef(uid=chunk.library.uid, name=chunk.library.name),
        collection=CollectionRef(uid=chunk.collection.uid, name=chunk.collection.name),
        item=ItemRef(uid=chunk.item.uid, title=chunk.item.title),
        section=chunk.section_path,
        page=chunk.page,
        page_end=chunk.page_end,
        ocr=chunk.ocr_confidence is not None,
        char_start=chunk.char_start,
        char_end=chunk.char_end,
        url=citation_url(chunk.uid),
        explain=(
            Explain(
                fused_score=round(hit.score, 6),
                rerank_score=None if hit.rerank_score is None else round(hit.rerank_score, 6),
                legs={
                    leg: LegScore(rank=entry.rank, score=round(entry.score, 6))
                    for leg, entry in hit.legs.items()
                },
                document=None if hit.document_score is None else round(hit.document_score, 6),
                page=None if hit.page_score is None else round(hit.page_score, 6),
                terms={term: round(share, 6) for term, share in hit.term_shares.items()} or None,
                concepts={key: round(share, 6) for key, share in hit.concept_shares.items()} or None,
            )
            if "explain" in extras
            else None
        ),
        text=chunk_text(chunk) if "text" in extras else None,
        source=chunk.item.source if "source" in extras else None,
        duplicates=hit.duplicates if "duplicates" in extras else None,
        grouped=hit.grouped or None,
    )


def render_search(result: SearchResult) -> str:
    lines = [
        f"{len(result.results)} results (legs: {', '.join(result.legs_run) or 'none'}; {result.fusion})."
    ]
    for number, hit in enumerate(result.results, start=1):
        section = hit.section.removeprefix(f"{hit.item.title} › ")
        where = f"{hit.item.title} › {section}" if section and section != hit.item.title else hit.item.title
        page = f", pp. {hit.page}-{hit.page_end}" if hit.page_end else f", p. {hit.page}" if hit.page else ""
        preview = " ".join(hit.text_preview.split())[:160]
        lines.append(f"{number}. [{hit.chunk_uid}] {where}{page} (score {hit.score:.4f})")
        lines.append(f"   {preview}")
        lines.append(f"   {hit.url}")
    for leg, reason in result.legs_not_run.items():
        lines.append(f"Not run: {leg}: {reason}.")
    if result.rerank.requested and not result.rerank.applied:
        lines.append(f"Rerank not applied: {result.rerank.note}.")
    if result.next_cursor:
        lines.append("More results: call search again with the same arguments and cursor=next_cursor.")
    return "\n".join(lines)


SEARCH = ToolSpec(
    name="search",
    handler=search,
    arguments=SearchArguments,
    result=SearchResult,
    pages=True,
    title="Search the libraries",
    description=(
        "Hybrid search (semantic vectors + BM25 keywords, fused) over ingested documents. Returns ranked "
        "chunks with chunk_uid, a preview, and citation data (library, collection, item, section, page, "
        "character offsets). Use get_chunk with a chunk_uid for the full text, and cite chunk_uids in your "
        "answer. Narrow with library_uid / collection_uid from list_libraries / list_collections; use alpha "
        "to favour exact keywords (0) or meaning (1); page with next_cursor."
    ),
    render=render_search,
)
