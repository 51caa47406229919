"""Every item read records its time per stage (the console's ingestion view shows them): read,
parse, OCR, chunk, and its share of its batch's embedding and writing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.models import Item
from mnemosyne.library.services import ensure_collection, ensure_library
from tests.conftest import FIXTURES
from tests.ingestion.test_pdf_documents import scanned
from tests.stand_in_embedder import StandInEmbedder

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_each_item_records_its_seconds_per_stage(tmp_path: Path, settings) -> None:
    # Times, not OCR's accuracy, are checked: the scan is read at its own 150 dpi, not enlarged.
    settings.OCR_DPI = 150
    shutil.copy(FIXTURES / "pdfs" / "berths.pdf", tmp_path / "berths.pdf")
    shutil.copy(FIXTURES / "docs" / "backups.md", tmp_path / "backups.md")
    (tmp_path / "scan.pdf").write_bytes(scanned("bzip2-manual.pdf", [8], 150))
    collection = ensure_collection(library=ensure_library(name="Timed"), name="c")
    # Times, not vectors, are checked: the stand-in embeds.
    ingest_paths([tmp_path], collection=collection, report=lambda line: None, embedder=StandInEmbedder())
    stages = {item.source.rsplit("/", 1)[-1]: item.metadata["stages"] for item in Item.objects.all()}
    assert set(stages) == {"berths.pdf", "backups.md", "scan.pdf"}
    for name, seconds in stages.items():
        assert set(seconds) == {"read", "parse", "ocr", "chunk", "embed", "write"}, name
        assert all(value >= 0 for value in seconds.values()), name
        assert seconds["embed"] > 0 and seconds["write"] > 0, name
    assert stages["scan.pdf"]["ocr"] > 0.1  # a page recognised
    assert stages["backups.md"]["ocr"] == 0 and stages["berths.pdf"]["ocr"] == 0
