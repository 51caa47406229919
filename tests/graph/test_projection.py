"""The Neo4j graph is a projection of PostgreSQL, fed after commit: a rolled-back write never reaches it.

Neo4j cannot run here, so the projected store is a recording stand-in in the Neo4j backend's place:
what matters is what it is sent, and when.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from pytest_django.fixtures import Settings

from mnemosyne import graph
from mnemosyne.embedding import Embedder
from mnemosyne.graph import ChunkConcepts, GraphUnavailable
from mnemosyne.graph import projection as graph_projection
from mnemosyne.ingestion import runner, services
from mnemosyne.library.models import Chunk, Item
from mnemosyne.library.services import delete_item, ensure_collection, ensure_library
from mnemosyne.storage import get_chunk_store

pytestmark = pytest.mark.django_db(transaction=True)


class RecordingProjection:
    """Holds what a projected graph would: each chunk's mentions as last sent."""

    def __init__(self) -> None:
        self.chunks: dict[int, ChunkConcepts] = {}
        self.down = False

    def record_chunk_concepts(self, mentions: Sequence[ChunkConcepts]) -> None:
        if self.down:
            raise GraphUnavailable("Neo4j at bolt://graph:7687 is unreachable")
        for entry in mentions:
            self.chunks[entry.chunk_id] = entry

    def forget_chunks(self, chunk_ids: Sequence[int]) -> None:
        if self.down:
            raise GraphUnavailable("Neo4j at bolt://graph:7687 is unreachable")
        for chunk_id in chunk_ids:
            self.chunks.pop(chunk_id, None)

    def close(self) -> None:
        pass


@pytest.fixture
def projection(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> RecordingProjection:
    recorder = RecordingProjection()
    settings.GRAPH_BACKEND = "neo4j"
    monkeypatch.setitem(graph._stores, "neo4j", recorder)
    return recorder


def write_docs(root: Path) -> Path:
    root.mkdir()
    (root / "tides.md").write_text("# Tides\n\nTidal energy turbines sit in tidal streams near the coast.\n")
    (root / "rivers.md").write_text("# Rivers\n\nRiver mills turned water wheels with river currents.\n")
    return root


def test_a_rolled_back_batch_sends_nothing_to_the_projected_graph(
    projection: RecordingProjection, embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the full-text index write failed")

    monkeypatch.setattr(services, "write_postings", fail)
    collection = ensure_collection(library=ensure_library(name="Projection"), name="c")
    summary = runner.ingest_paths(
        [write_docs(tmp_path / "docs")], collection=collection, report=lambda line: None, embedder=embedder
    )

    assert summary.counts()["failed"] == 2
    assert not Chunk.objects.exists()
    assert projection.chunks == {}


def test_committed_chunks_reach_the_projected_graph_as_postgresql_holds_them(
    projection: RecordingProjection, embedder: Embedder, tmp_path: Path
) -> None:
    collection = ensure_collection(library=ensure_library(name="Projection"), name="c")
    runner.ingest_paths(
        [write_docs(tmp_path / "docs")], collection=collection, report=lambda line: None, embedder=embedder
    )

    chunk_ids = set(Chunk.objects.values_list("id", flat=True))
    assert set(projection.chunks) == chunk_ids
    keys = {concept.key for entry in projection.chunks.values() for concept in entry.concepts}
    assert "tidal energy turbine" in keys or "tidal stream" in keys


def test_a_projection_that_is_down_keeps_the_changes_until_a_later_drain(
    projection: RecordingProjection, embedder: Embedder, tmp_path: Path
) -> None:
    projection.down = True
    collection = ensure_collection(library=ensure_library(name="Projection"), name="c")
    summary = runner.ingest_paths(
        [write_docs(tmp_path / "docs")], collection=collection, report=lambda line: None, embedder=embedder
    )

    # PostgreSQL has it all; the projection is behind, and nothing is lost.
    assert summary.counts()["created"] == 2
    assert projection.chunks == {} and graph_projection.pending() > 0
    projection.down = False
    graph_projection.drain(projection)
    assert graph_projection.pending() == 0
    assert set(projection.chunks) == set(Chunk.objects.values_list("id", flat=True))
    # Draining again, or re-applying, changes nothing.
    before = dict(projection.chunks)
    graph_projection.drain(projection)
    assert projection.chunks == before


def test_deleting_an_item_forgets_its_chunks_in_the_projection(
    projection: RecordingProjection, embedder: Embedder, tmp_path: Path
) -> None:
    collection = ensure_collection(library=ensure_library(name="Projection"), name="c")
    runner.ingest_paths(
        [write_docs(tmp_path / "docs")], collection=collection, report=lambda line: None, embedder=embedder
    )
    item = Item.objects.get(source="docs/tides.md")
    gone = set(Chunk.objects.filter(item=item).values_list("id", flat=True))

    delete_item(item_uid=item.uid, dry_run=False, store=get_chunk_store())

    assert gone and gone.isdisjoint(projection.chunks)
    assert set(projection.chunks) == set(Chunk.objects.values_list("id", flat=True))
