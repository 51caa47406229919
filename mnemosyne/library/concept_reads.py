"""Reads of the concept graph within the calling MCP token's library boundary (selectors.py's rule:
outside it, a chunk or a mention is treated exactly like one that does not exist)."""

from __future__ import annotations

from dataclasses import dataclass

from mnemosyne.graph import ConceptCount, get_graph_store
from mnemosyne.graph.concepts import normalise_concept
from mnemosyne.lib.scope import Scope
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import Chunk
from mnemosyne.library.selectors import get_collection, get_library, visible_library_ids, within_boundary


def top_concepts(
    *, library_uid: str | None = None, collection_uid: str | None = None, limit: int, offset: int = 0
) -> list[ConceptCount]:
    """The most-mentioned concepts (chunks mentioning each), one page, from the GraphStore."""
    library_id = get_library(library_uid).pk if library_uid is not None else None
    collection_id = get_collection(collection_uid).pk if collection_uid is not None else None
    visible = visible_library_ids()
    store = get_graph_store()
    if visible is None or library_id is not None or collection_id is not None:
        return store.top_concepts(
            scope=Scope(library_id=library_id, collection_id=collection_id), limit=limit, offset=offset
        )
    # Confined to several libraries: each library's top counts, summed (mentions are per chunk).
    totals: dict[str, ConceptCount] = {}
    for visible_id in sorted(visible):
        for count in store.top_concepts(scope=Scope(library_id=visible_id), limit=offset + limit, offset=0):
            seen = totals.get(count.key)
            totals[count.key] = (
                count
                if seen is None
                else ConceptCount(
                    key=count.key, label=seen.label, mention_count=seen.mention_count + count.mention_count
                )
            )
    ranked = sorted(totals.values(), key=lambda c: (-c.mention_count, c.key))
    return ranked[offset : offset + limit]


@dataclass(frozen=True)
class ConceptNeighbour:
    key: str
    label: str
    weight: int
    example_chunk_uids: list[str]


def related_concepts(concept: str, *, limit: int) -> tuple[str, list[ConceptNeighbour]]:
    """The concept's key and the concepts co-occurring with it, strongest first."""
    key = normalise_concept(concept)
    store = get_graph_store()
    if not key or not store.known_concepts([key]):
        raise InvalidArgument(f"no chunk mentions the concept {concept!r}; list_concepts shows known ones")
    visible = visible_library_ids()
    if visible is not None and not store.chunks_mentioning(
        [(key, 1.0)], scope=Scope(library_ids=sorted(visible)), limit=1
    ):
        raise InvalidArgument(f"no chunk mentions the concept {concept!r}; list_concepts shows known ones")
    # Inside a boundary, weights count only the chunks inside it: the rest must not show through.
    neighbours = store.neighbours(key, limit=limit, library_ids=None if visible is None else sorted(visible))
    chunk_ids = {chunk_id for neighbour in neighbours for chunk_id in neighbour.example_chunk_ids}
    uid_of = dict(
        within_boundary(Chunk.objects.filter(id__in=chunk_ids), "library_id").values_list("id", "uid")
    )
    return key, [
        ConceptNeighbour(
            key=neighbour.key,
            label=neighbour.label,
            weight=neighbour.weight,
            example_chunk_uids=[uid_of[i] for i in neighbour.example_chunk_ids if i in uid_of],
        )
        for neighbour in neighbours
    ]
