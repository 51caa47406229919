"""A hit's chunk as search reads it (legs.hydrate): what a hit shows and cites, with its item,
collection and library, in plain slotted dataclasses rather than model instances."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True, slots=True)
class Named:
    """A hit's library or collection, as a citation names it."""

    id: int
    uid: str
    name: str


@dataclass(frozen=True, slots=True)
class HitItem:
    id: int
    uid: str
    title: str
    source: str
    item_type: str


@dataclass(frozen=True, slots=True)
class HitChunk:
    """What a hit shows and cites of its chunk, read in one query (legs.hydrate): the attributes
    of library.models.Chunk a hit needs, under the same names, without building model instances."""

    id: int
    uid: str
    ordinal: int
    kind: str
    mime_type: str
    image_key: str
    text_preview: str
    section_path: str
    page: int | None
    page_end: int | None
    ocr_confidence: float | None
    char_start: int
    char_end: int
    token_count: int
    storage_key: str
    _: KW_ONLY
    item: HitItem
    collection: Named
    library: Named
    # Only when diversity (MMR) is asked for.
    embedding: np.ndarray | None = None

    @property
    def item_id(self) -> int:
        return self.item.id

    @property
    def collection_id(self) -> int:
        return self.collection.id

    @property
    def library_id(self) -> int:
        return self.library.id
