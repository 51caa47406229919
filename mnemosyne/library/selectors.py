"""Reads of the library tree, shared by the MCP tools, commands and admin."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import QuerySet

from mnemosyne.library.errors import NotFound
from mnemosyne.library.models import Chunk, Collection, Item, Library
from mnemosyne.storage import ChunkNotFound, get_chunk_store


def get_library(uid: str) -> Library:
    library = Library.objects.filter(uid=uid).first()
    if library is None:
        raise NotFound("library", uid)
    return library


def get_collection(uid: str) -> Collection:
    collection = Collection.objects.select_related("library").filter(uid=uid).first()
    if collection is None:
        raise NotFound("collection", uid)
    return collection


def libraries() -> QuerySet[Library]:
    return Library.objects.order_by("name")


def collections(*, library_uid: str | None = None) -> QuerySet[Collection]:
    queryset = Collection.objects.select_related("library").order_by("library__name", "name")
    if library_uid is not None:
        queryset = queryset.filter(library=get_library(library_uid))
    return queryset


def items(*, collection_uid: str | None = None, library_uid: str | None = None) -> QuerySet[Item]:
    queryset = Item.objects.select_related("collection", "collection__library").order_by("title", "id")
    if collection_uid is not None:
        queryset = queryset.filter(collection=get_collection(collection_uid))
    if library_uid is not None:
        queryset = queryset.filter(collection__library=get_library(library_uid))
    return queryset


@dataclass(frozen=True)
class Neighbour:
    chunk: Chunk
    text: str


@dataclass(frozen=True)
class ChunkDetail:
    chunk: Chunk
    text: str
    previous_uid: str | None
    next_uid: str | None
    before: list[Neighbour] = field(default_factory=list)
    after: list[Neighbour] = field(default_factory=list)


def chunk_text(chunk: Chunk) -> str:
    """The chunk's full text from the ChunkStore (the preview if the object is gone)."""
    try:
        return get_chunk_store().get(chunk.storage_key).decode("utf-8")
    except ChunkNotFound:
        return chunk.text_preview


def chunk_image(uid: str) -> bytes | None:
    chunk = Chunk.objects.filter(uid=uid).only("image_key").first()
    if chunk is None or not chunk.image_key:
        return None
    try:
        return get_chunk_store().get(chunk.image_key)
    except ChunkNotFound:
        return None


def chunk_detail(uid: str, *, context: int = 0) -> ChunkDetail:
    chunk = (
        Chunk.objects.select_related("item", "collection", "library")
        .defer("embedding", "search_vector")
        .filter(uid=uid)
        .first()
    )
    if chunk is None:
        raise NotFound("chunk", uid)
    reach = max(context, 1)
    nearby = {
        neighbour.ordinal: neighbour
        for neighbour in Chunk.objects.filter(
            item_id=chunk.item_id, ordinal__gte=chunk.ordinal - reach, ordinal__lte=chunk.ordinal + reach
        ).defer("embedding", "search_vector")
    }
    previous, following = nearby.get(chunk.ordinal - 1), nearby.get(chunk.ordinal + 1)
    before = [nearby[o] for o in range(chunk.ordinal - context, chunk.ordinal) if o in nearby]
    after = [nearby[o] for o in range(chunk.ordinal + 1, chunk.ordinal + context + 1) if o in nearby]
    return ChunkDetail(
        chunk=chunk,
        text=chunk_text(chunk),
        previous_uid=previous.uid if previous else None,
        next_uid=following.uid if following else None,
        before=[Neighbour(n, chunk_text(n)) for n in before],
        after=[Neighbour(n, chunk_text(n)) for n in after],
    )
