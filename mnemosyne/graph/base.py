"""GraphStore: the concept graph of chunks → concepts, and concept ↔ concept co-occurrence.

A chunk mentions concepts (each with the extractor's score); two concepts mentioned by the same
chunk are joined by an edge whose weight is the number of chunks mentioning both. Backends:
PostgreSQL tables (postgres.py, the default) and Neo4j (neo4j.py); both pass tests/graph.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from mnemosyne.graph.concepts import Concept
from mnemosyne.lib.scope import EVERYWHERE, Scope

__all__ = [
    "HOP_DECAY",
    "ChunkConcepts",
    "Concept",
    "ConceptCount",
    "GraphError",
    "GraphStore",
    "GraphUnavailable",
    "Neighbour",
    "NodeEdges",
    "expand_by_hops",
]

# A neighbour one hop away scores at most this much, two hops away at most its square.
HOP_DECAY = 0.5
EXAMPLE_CHUNKS = 3


class GraphError(Exception):
    """The graph store failed."""


class GraphUnavailable(GraphError):
    """The graph server could not be reached or refused the credentials."""


@dataclass(frozen=True, slots=True)
class ChunkConcepts:
    """The concepts one chunk mentions, with the chunk's library and collection for filtering."""

    chunk_id: int
    library_id: int
    collection_id: int
    concepts: list[Concept] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Neighbour:
    key: str
    label: str
    weight: int  # chunks mentioning both concepts
    example_chunk_ids: list[int]  # up to three of those chunks, lowest id first


@dataclass(frozen=True, slots=True)
class ConceptCount:
    key: str
    label: str
    mention_count: int  # chunks mentioning the concept (within the filters asked for)


@dataclass(frozen=True, slots=True)
class NodeEdges:
    """A concept's strongest edges (neighbour key, weight), and its strongest weight overall."""

    strongest: int
    edges: list[tuple[str, int]]


class GraphStore(Protocol):
    def record_chunk_concepts(self, mentions: Sequence[ChunkConcepts]) -> None:
        """Record what each chunk mentions, replacing what was recorded for it before.

        Edges gain 1 per chunk for every pair of its concepts. One batch is one transaction.
        """
        ...

    def forget_chunks(self, chunk_ids: Sequence[int]) -> None:
        """Drop the chunks' mentions; edges lose their share and go at zero. Idempotent."""
        ...

    def neighbours(
        self, concept_key: str, *, limit: int, library_ids: Sequence[int] | None = None
    ) -> list[Neighbour]:
        """The concepts co-occurring with `concept_key`, strongest first (ties by key).

        With `library_ids`, weights and examples count only chunks in those libraries (a caller
        confined to them learns nothing from the rest); an empty list matches nothing.
        """
        ...

    def expand(self, concept_keys: Sequence[str], *, hops: int = 1, limit: int) -> list[tuple[str, float]]:
        """The seeds (score 1.0, as given) then concepts within `hops` (1 or 2), best first, `limit` in all.

        A neighbour scores HOP_DECAY * weight / the strongest weight of the concept it was reached
        from, times that concept's own score; its best path counts. Pass known seeds (`known_concepts`).
        """
        ...

    def chunks_mentioning(
        self,
        concept_keys_with_weights: Sequence[tuple[str, float]],
        *,
        scope: Scope = EVERYWHERE,
        limit: int,
    ) -> list[tuple[int, float]]:
        """Chunks within `scope` scored by the sum of concept weight * mention score, best first
        (ties by chunk id). A scope whose `library_ids` is empty matches nothing."""
        ...

    def top_concepts(self, *, scope: Scope = EVERYWHERE, limit: int, offset: int = 0) -> list[ConceptCount]:
        """Concepts by how many chunks within `scope` mention them (ties by key), one page."""
        ...

    def known_concepts(self, keys: Sequence[str]) -> list[str]:
        """Those of `keys` that some chunk mentions, in the order given."""
        ...

    def close(self) -> None:
        """Release connections (the ASGI lifespan calls this once at shutdown)."""
        ...


def check_limit(limit: int, *, name: str = "limit") -> None:
    if limit < 1:
        raise ValueError(f"{name} must be at least 1, not {limit}")


def check_hops(hops: int) -> None:
    if hops not in (1, 2):
        raise ValueError(f"hops must be 1 or 2, not {hops}")


def merged_weights(concept_keys_with_weights: Sequence[tuple[str, float]]) -> dict[str, float]:
    """One weight per key (the largest given), in first-seen order."""
    weights: dict[str, float] = {}
    for key, weight in concept_keys_with_weights:
        weights[key] = max(weight, weights.get(key, weight))
    return weights


def mention_rows(mentions: Sequence[ChunkConcepts]) -> dict[int, ChunkConcepts]:
    """The last entry per chunk, each with one concept per key (the best-scored)."""
    rows: dict[int, ChunkConcepts] = {}
    for entry in mentions:
        best: dict[str, Concept] = {}
        for concept in entry.concepts:
            if concept.key and (concept.key not in best or concept.score > best[concept.key].score):
                best[concept.key] = concept
        rows[entry.chunk_id] = ChunkConcepts(
            entry.chunk_id, entry.library_id, entry.collection_id, list(best.values())
        )
    return rows


def expand_by_hops(
    seeds: Sequence[str],
    *,
    hops: int,
    limit: int,
    fetch_edges: Callable[[list[str], int], Mapping[str, NodeEdges]],
) -> list[tuple[str, float]]:
    """Breadth-first expansion shared by the backends; `fetch_edges(keys, n)` gives each key's top n edges."""
    check_hops(hops)
    check_limit(limit)
    seed_keys = list(dict.fromkeys(seeds))
    scores: dict[str, float] = {}
    frontier = dict.fromkeys(seed_keys, 1.0)
    for _hop in range(hops):
        if not frontier:
            break
        edges_of = fetch_edges(list(frontier), limit)
        reached: dict[str, float] = {}
        for key, key_score in frontier.items():
            node = edges_of.get(key)
            if node is None or node.strongest <= 0:
                continue
            for neighbour, weight in node.edges:
                if neighbour in frontier or neighbour in seed_keys:
                    continue
                score = key_score * HOP_DECAY * weight / node.strongest
                if score > max(scores.get(neighbour, 0.0), reached.get(neighbour, 0.0)):
                    reached[neighbour] = score
        scores.update(reached)
        # Only the best few go on to the next hop, so a hub cannot flood the expansion.
        frontier = dict(sorted(reached.items(), key=lambda item: (-item[1], item[0]))[:limit])
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return [(key, 1.0) for key in seed_keys][:limit] + ranked[: max(0, limit - len(seed_keys))]
