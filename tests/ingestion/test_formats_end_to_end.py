"""A real PDF through ingest and search: page-exact citations and image chunks."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.chunk_reads import chunk_image
from mnemosyne.library.models import Chunk, ChunkKind
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.search.service import SearchRequest, search
from tests.documents import outlined_pdf, png_bytes, report_pdf

# Legs run in threads of their own, on connections of their own: the data must be committed.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def reports(tmp_path: Path, embedder: Embedder) -> Path:
    root = tmp_path / "reports"
    root.mkdir()
    (root / "tidal.pdf").write_bytes(report_pdf())
    (root / "outlined.pdf").write_bytes(outlined_pdf())
    (root / "barrage-photo.png").write_bytes(
        png_bytes(Description="Aerial photo of the tidal barrage at dawn")
    )
    collection = ensure_collection(library=ensure_library(name="Energy"), name="reports")
    summary = ingest_paths([root], collection=collection, report=lambda line: None, embedder=embedder)
    assert summary.counts()["created"] == 3, summary.skipped
    return root


def test_a_pdf_hit_cites_its_pages(reports: Path, embedder: Embedder) -> None:
    hits = search(SearchRequest(query="turbines in the stream", include_images=False), embedder=embedder).hits
    # The tidal report is six short lines over three pages: one chunk, citing the pages it runs over.
    best = next(hit.chunk for hit in hits if hit.chunk.item.title == "Tidal Report")
    assert best.page is not None and best.page <= 3 <= (best.page_end or best.page)
    assert (best.page, best.page_end) == (1, 3)
    pages = set(
        Chunk.objects.filter(item_id=best.item_id, kind=ChunkKind.TEXT).values_list("page", flat=True)
    )
    assert pages <= {1, 2, 3} and 1 in pages


def test_a_pdf_hit_cites_the_section_its_outline_names(reports: Path, embedder: Embedder) -> None:
    hits = search(
        SearchRequest(query="a barrage across the estuary mouth", include_images=False), embedder=embedder
    ).hits
    best = hits[0].chunk
    assert best.item.title == "Outlined Report"
    assert (best.page, best.section_path) == (2, "1 Tides › 1.1 Barrages")


def test_images_become_searchable_image_chunks(reports: Path, embedder: Embedder) -> None:
    images = Chunk.objects.filter(kind=ChunkKind.IMAGE).select_related("item")
    by_item = {chunk.item.source: chunk for chunk in images}
    assert {"reports/tidal.pdf", "reports/barrage-photo.png"} <= set(by_item)
    figure = next(c for c in images if c.item.source == "reports/tidal.pdf" and c.page == 2)
    assert figure.mime_type == "image/png" and "Figure 1" in figure.text_preview
    assert chunk_image(figure.uid) is not None and chunk_image(figure.uid).startswith(b"\x89PNG")  # type: ignore[union-attr]

    hits = search(SearchRequest(query="photo of the barrage at dawn"), embedder=embedder).hits
    assert hits[0].chunk.kind == ChunkKind.IMAGE and hits[0].chunk.item.source == "reports/barrage-photo.png"
    without = search(
        SearchRequest(query="photo of the barrage at dawn", include_images=False), embedder=embedder
    )
    assert all(hit.chunk.kind == ChunkKind.TEXT for hit in without.hits)
