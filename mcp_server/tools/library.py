"""Browsing tools: list_libraries, list_collections, list_items, get_chunk."""

import base64

from mcp.types import ImageContent
from pydantic import Field

from access.principal import Principal
from mcp_server.cursors import Page
from mcp_server.tools.links import citation_url
from mcp_server.tools.schemas import (
    ChunkItem,
    ChunkResult,
    CollectionInfo,
    CollectionList,
    CollectionRef,
    CursorArgument,
    ItemInfo,
    ItemList,
    LibraryInfo,
    LibraryList,
    LibraryRef,
    Location,
    NeighbourChunk,
)
from mcp_server.tools.spec import Arguments, ToolSpec
from mnemosyne.library import chunk_reads, selectors
from mnemosyne.library.models import Library


def _library_info(library: Library) -> LibraryInfo:
    return LibraryInfo(
        uid=library.uid, name=library.name, library_type=library.library_type, description=library.description
    )


class ListLibrariesArguments(Arguments):
    limit: int = Field(default=100, ge=1, le=1000, description="How many libraries per page, 1-1000.")
    cursor: CursorArgument = None


def list_libraries(caller: Principal, args: ListLibrariesArguments, page: Page) -> LibraryList:
    found = list(selectors.libraries()[page.offset : page.offset + args.limit + 1])
    return LibraryList(
        libraries=[_library_info(library) for library in found[: args.limit]],
        next_cursor=page.next_cursor(page.offset + args.limit if len(found) > args.limit else None),
    )


def render_libraries(result: LibraryList) -> str:
    if not result.libraries:
        return "No libraries yet."
    lines = [f"[{lib.uid}] {lib.name} ({lib.library_type})" for lib in result.libraries]
    return "\n".join([*lines, *_more(result.next_cursor, "list_libraries")])


class ListCollectionsArguments(Arguments):
    library_uid: str | None = Field(
        default=None, description="Only collections of this library (uid from list_libraries)."
    )
    limit: int = Field(default=100, ge=1, le=1000, description="How many collections per page, 1-1000.")
    cursor: CursorArgument = None


def list_collections(caller: Principal, args: ListCollectionsArguments, page: Page) -> CollectionList:
    found = list(
        selectors.collections(library_uid=args.library_uid)[page.offset : page.offset + args.limit + 1]
    )
    return CollectionList(
        collections=[
            CollectionInfo(
                uid=collection.uid,
                name=collection.name,
                description=collection.description,
                library=LibraryRef(uid=collection.library.uid, name=collection.library.name),
            )
            for collection in found[: args.limit]
        ],
        next_cursor=page.next_cursor(page.offset + args.limit if len(found) > args.limit else None),
    )


def render_collections(result: CollectionList) -> str:
    if not result.collections:
        return "No collections."
    lines = [f"[{c.uid}] {c.library.name} / {c.name}" for c in result.collections]
    return "\n".join([*lines, *_more(result.next_cursor, "list_collections")])


def _more(next_cursor: str | None, tool: str) -> list[str]:
    return [f"More: call {tool} again with cursor=next_cursor."] if next_cursor else []


class ListItemsArguments(Arguments):
    collection_uid: str | None = Field(
        default=None, description="Only items of this collection (uid from list_collections)."
    )
    library_uid: str | None = Field(
        default=None, description="Only items of this library (uid from list_libraries)."
    )
    limit: int = Field(default=100, ge=1, le=1000, description="How many items per page, 1-1000.")
    cursor: CursorArgument = None


def list_items(caller: Principal, args: ListItemsArguments, page: Page) -> ItemList:
    queryset = selectors.items(collection_uid=args.collection_uid, library_uid=args.library_uid)
    total = queryset.count()
    offset, limit = page.offset, args.limit
    return ItemList(
        items=[
            ItemInfo(
                uid=item.uid,
                title=item.title,
                item_type=item.item_type,
                chunk_count=item.chunk_count,
                embedding_status=item.embedding_status,
                embedding_error=item.embedding_error,
                collection=CollectionRef(uid=item.collection.uid, name=item.collection.name),
                organisation=item.organisation,
                doc_type=item.document_type,
                date=item.document_date.isoformat() if item.document_date else None,
                period=item.period,
            )
            for item in queryset[offset : offset + limit]
        ],
        total=total,
        next_cursor=page.next_cursor(offset + limit if offset + limit < total else None),
    )


def render_items(result: ItemList) -> str:
    if not result.items:
        return "No items."
    lines = [
        f"[{i.uid}] {i.title} ({''.join(_identity(i))}{i.item_type}, {i.chunk_count} chunks, "
        f"{i.embedding_status})"
        for i in result.items
    ]
    if result.next_cursor:
        lines.append(f"… {result.total} in all; call list_items again with cursor=next_cursor for more.")
    return "\n".join(lines)


def _identity(item: ItemInfo) -> list[str]:
    """What the item is, each known part followed by a comma, for its line of list_items."""
    parts = [item.organisation, item.doc_type, item.period, item.date or ""]
    return [f"{part}, " for part in parts if part]


class GetChunkArguments(Arguments):
    chunk_uid: str = Field(description="The chunk's uid, as returned by search.")
    context: int = Field(
        default=0, ge=0, le=5, description="Also return this many neighbouring chunks before and after, 0-5."
    )


def get_chunk(caller: Principal, args: GetChunkArguments) -> ChunkResult:
    detail = chunk_reads.chunk_detail(args.chunk_uid, context=args.context)
    chunk = detail.chunk
    return ChunkResult(
        chunk_uid=chunk.uid,
        kind=chunk.kind,
        mime_type=chunk.mime_type or None,
        text=detail.text,
        ordinal=chunk.ordinal,
        section=chunk.section_path,
        page=chunk.page,
        page_end=chunk.page_end,
        locations=[
            Location(page=page, x0=x0, y0=y0, x1=x1, y1=y1) for page, x0, y0, x1, y1 in chunk.locations or []
        ],
        ocr=chunk.ocr_confidence is not None,
        ocr_confidence=chunk.ocr_confidence,
        char_start=chunk.char_start,
        char_end=chunk.char_end,
        item=ChunkItem(
            uid=chunk.item.uid,
            title=chunk.item.title,
            source=chunk.item.source,
            item_type=chunk.item.item_type,
        ),
        collection=CollectionRef(uid=chunk.collection.uid, name=chunk.collection.name),
        library=_library_info(chunk.library),
        previous_chunk_uid=detail.previous_uid,
        next_chunk_uid=detail.next_uid,
        context_before=[_neighbour(n) for n in detail.before],
        context_after=[_neighbour(n) for n in detail.after],
        url=citation_url(chunk.uid),
    )


def _neighbour(neighbour: chunk_reads.NeighbouringChunk) -> NeighbourChunk:
    return NeighbourChunk(
        chunk_uid=neighbour.chunk.uid,
        ordinal=neighbour.chunk.ordinal,
        section=neighbour.chunk.section_path,
        page=neighbour.chunk.page,
        text=neighbour.text,
    )


def chunk_image(result: ChunkResult) -> list[ImageContent]:
    if result.kind != "image" or not result.mime_type:
        return []
    data = chunk_reads.chunk_image(result.chunk_uid)
    if data is None:
        return []
    return [
        ImageContent(type="image", data=base64.b64encode(data).decode("ascii"), mime_type=result.mime_type)
    ]


def render_chunk(result: ChunkResult) -> str:
    where = " › ".join(part for part in (result.item.title, result.section) if part)
    page = f", page {result.page}" if result.page else ""
    if result.page_end:
        page = f", pages {result.page}-{result.page_end}"
    kind = "Image" if result.kind == "image" else "Chunk"
    parts = [f"{kind} [{result.chunk_uid}] {where}{page} — {result.item.source}"]
    parts += [f"(before, [{n.chunk_uid}]) {n.text}" for n in result.context_before]
    parts.append(result.text)
    parts += [f"(after, [{n.chunk_uid}]) {n.text}" for n in result.context_after]
    parts.append(f"Open at its passage: {result.url}")
    return "\n\n".join(parts)


LIST_LIBRARIES = ToolSpec(
    name="list_libraries",
    handler=list_libraries,
    arguments=ListLibrariesArguments,
    result=LibraryList,
    title="List libraries",
    description=(
        "List the libraries (the top level of the document tree: library → collection → item → chunk) "
        "with uid, name, type and description. Start here to find the library_uid to narrow search, "
        "list_collections or list_concepts. Pages with next_cursor."
    ),
    render=render_libraries,
    pages=True,
    version="1.1",
)
LIST_COLLECTIONS = ToolSpec(
    name="list_collections",
    handler=list_collections,
    arguments=ListCollectionsArguments,
    result=CollectionList,
    title="List collections",
    description=(
        "List collections, optionally only those of one library, each with its parent library. A "
        "collection_uid narrows search, list_items, list_topics and list_concepts, and is where upsert_item "
        "writes. Pages with next_cursor."
    ),
    render=render_collections,
    pages=True,
    version="1.1",
)
LIST_ITEMS = ToolSpec(
    name="list_items",
    handler=list_items,
    arguments=ListItemsArguments,
    result=ItemList,
    title="List items",
    description=(
        "List ingested items (documents) with their chunk counts and ingestion status, optionally only "
        "those of one collection or library; total counts every match. Pages with next_cursor. Read an "
        "item's chunk outline from the resource mnemosyne://item/{item_uid}."
    ),
    render=render_items,
    pages=True,
    version="1.1",
)
GET_CHUNK = ToolSpec(
    name="get_chunk",
    handler=get_chunk,
    arguments=GetChunkArguments,
    result=ChunkResult,
    title="Get a chunk",
    description=(
        "Fetch one chunk's full text and provenance (item title and source, collection, library, section, "
        "page, offsets) plus the uids of its neighbouring chunks; context=N also returns N chunks before "
        "and after, to read around a search hit. For an image chunk the image itself is returned too."
    ),
    render=render_chunk,
    attachments=chunk_image,
)
