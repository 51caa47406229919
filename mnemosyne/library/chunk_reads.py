"""Reads of chunks for a reader: a chunk's full text and picture from the chunk store, a chunk with
its neighbours in its item's order (get_chunk's context), an item's outline. Inside the caller's
library boundary (selectors.within_boundary), as every read is."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from mnemosyne.library.errors import NotFound
from mnemosyne.library.models import Chunk, Item
from mnemosyne.library.selectors import within_boundary
from mnemosyne.storage import ChunkNotFound, get_chunk_store


@dataclass(frozen=True)
class NeighbouringChunk:
    """A chunk next to the one asked for, in its item's order, with its text (get_chunk's context)."""

    chunk: Chunk
    text: str


@dataclass(frozen=True)
class ChunkDetail:
    chunk: Chunk
    text: str
    previous_uid: str | None
    next_uid: str | None
    before: list[NeighbouringChunk] = field(default_factory=list)
    after: list[NeighbouringChunk] = field(default_factory=list)


class StoredText(Protocol):
    """A chunk as stored: a Chunk, or a search hit's chunk (search.types.HitChunk)."""

    @property
    def storage_key(self) -> str: ...

    @property
    def text_preview(self) -> str: ...


def chunk_text(chunk: StoredText) -> str:
    """The chunk's full text from the ChunkStore (the preview if the object is gone)."""
    try:
        return get_chunk_store().get(chunk.storage_key).decode("utf-8")
    except ChunkNotFound:
        return chunk.text_preview


def chunk_image(uid: str) -> bytes | None:
    chunk = within_boundary(Chunk.objects.filter(uid=uid), "library_id").only("image_key").first()
    if chunk is None or not chunk.image_key:
        return None
    try:
        return get_chunk_store().get(chunk.image_key)
    except ChunkNotFound:
        return None


def chunk_detail(uid: str, *, context: int = 0) -> ChunkDetail:
    chunk = (
        within_boundary(Chunk.objects.select_related("item", "collection", "library"), "library_id")
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
        before=[NeighbouringChunk(n, chunk_text(n)) for n in before],
        after=[NeighbouringChunk(n, chunk_text(n)) for n in after],
    )


@dataclass(frozen=True)
class ItemOutline:
    item: Item
    chunks: list[Chunk]
    truncated: bool


def item_outline(uid: str, *, max_chunks: int = 1000) -> ItemOutline:
    """An item with its chunks in order (without vectors), for reading its structure."""
    item = within_boundary(
        Item.objects.select_related("collection", "collection__library").filter(uid=uid),
        "collection__library_id",
    ).first()
    if item is None:
        raise NotFound("item", uid)
    chunks = list(
        Chunk.objects.filter(item=item)
        .order_by("ordinal")
        .only("uid", "ordinal", "kind", "section_path", "page", "text_preview")[: max_chunks + 1]
    )
    return ItemOutline(item=item, chunks=chunks[:max_chunks], truncated=len(chunks) > max_chunks)
