"""Reads of the library tree, shared by the MCP tools, commands and admin."""

from __future__ import annotations

from dataclasses import dataclass

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
class ChunkDetail:
    chunk: Chunk
    text: str
    previous_uid: str | None
    next_uid: str | None


def chunk_text(chunk: Chunk) -> str:
    """The chunk's full text from the ChunkStore (the preview if the object is gone)."""
    try:
        return get_chunk_store().get(chunk.storage_key).decode("utf-8")
    except ChunkNotFound:
        return chunk.text_preview


def chunk_detail(uid: str) -> ChunkDetail:
    chunk = (
        Chunk.objects.select_related("item", "collection", "library")
        .defer("embedding", "search_vector")
        .filter(uid=uid)
        .first()
    )
    if chunk is None:
        raise NotFound("chunk", uid)
    neighbours = dict(
        Chunk.objects.filter(
            item_id=chunk.item_id, ordinal__in=[chunk.ordinal - 1, chunk.ordinal + 1]
        ).values_list("ordinal", "uid")
    )
    return ChunkDetail(
        chunk=chunk,
        text=chunk_text(chunk),
        previous_uid=neighbours.get(chunk.ordinal - 1),
        next_uid=neighbours.get(chunk.ordinal + 1),
    )
