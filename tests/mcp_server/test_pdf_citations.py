"""A real PDF manual through the official MCP client over HTTP: hits cite page ranges, get_chunk
returns the boxes to highlight, and a scanned page says it was read by OCR."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.services import ensure_collection, ensure_library
from tests.conftest import FIXTURES
from tests.ingestion.test_pdf_documents import scanned
from tests.mcp_server.clients import mcp_session, run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_a_pdf_hit_cites_its_pages_and_get_chunk_gives_its_boxes(
    live_server_url: str, token: str, embedder: Embedder, tmp_path: Path, settings
) -> None:
    shutil.copy(FIXTURES / "pdfs" / "libtasn1.pdf", tmp_path / "libtasn1.pdf")
    # The citation's boxes, not OCR's accuracy, are checked: a 150 dpi scan, read at 150 dpi
    # (a quarter of the pixels of the default 300; accuracy at each is test_pdf_documents.py's).
    settings.OCR_DPI = 150
    (tmp_path / "scan.pdf").write_bytes(scanned("bzip2-manual.pdf", [8], 150))
    library = ensure_library(name="Manuals")
    collection = ensure_collection(library=library, name="debian")
    ingest_paths([tmp_path], collection=collection, report=lambda line: None, embedder=embedder)

    async def scenario() -> dict[str, Any]:
        async with mcp_session(live_server_url, token, "streamable-http") as session:
            # Full-width letters in the query are read as the documents were.
            found = await session.call_tool(
                "search",
                {
                    "query": "Which ＡＳＮ.1 type is not handled at all?",
                    "library_uid": library.uid,
                    "return_metadata": ["text"],
                },
            )
            hits = found.structured_content["results"]
            answer = next(hit for hit in hits if "REAL type" in hit["text"])
            chunk = await session.call_tool("get_chunk", {"chunk_uid": answer["chunk_uid"]})
            scan = await session.call_tool(
                "search", {"query": "a file name that begins with a hyphen", "library_uid": library.uid}
            )
            ocr_hit = next(
                hit for hit in scan.structured_content["results"] if hit["item"]["title"] == "scan"
            )
            ocr_chunk = await session.call_tool("get_chunk", {"chunk_uid": ocr_hit["chunk_uid"]})
            return {"answer": answer, "chunk": chunk.structured_content, "ocr": ocr_chunk.structured_content}

    out = run(scenario)
    answer, chunk = out["answer"], out["chunk"]
    # The list of types runs from page 5 onto page 6, where the answer follows it: one chunk, both
    # pages, without the running header between them.
    assert (answer["page"], answer["page_end"]) == (5, 6) and answer["section"].endswith("ASN.1 syntax")
    assert "Chapter 2: ASN.1 structure handling" not in answer["text"] and answer["ocr"] is False
    assert (chunk["page"], chunk["page_end"], chunk["ocr"], chunk["ocr_confidence"]) == (5, 6, False, None)
    assert {box["page"] for box in chunk["locations"]} == {5, 6}
    for box in chunk["locations"]:
        assert 0 <= box["x0"] < box["x1"] <= 612 and 0 <= box["y0"] < box["y1"] <= 792

    ocr = out["ocr"]
    assert ocr["ocr"] is True and 0.8 < ocr["ocr_confidence"] <= 1
    assert ocr["page"] == 1 and ocr["locations"]
    assert all(box["page"] == 1 and 0 <= box["x0"] < box["x1"] <= 612 for box in ocr["locations"])
