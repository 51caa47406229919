"""Real PDFs read right: Debian's libtasn1 and bzip2 manuals, and a LibreOffice document with a table."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.documents import ParsedDocument
from mnemosyne.ingestion.parsing import parse_bytes
from mnemosyne.ingestion.planning import PlannedChunk, plan_chunks
from tests.conftest import FIXTURES

PDFS = FIXTURES / "pdfs"


@cache
def parsed(name: str) -> ParsedDocument:
    return parse_bytes((PDFS / name).read_bytes(), filename=name)


def planned(name: str, embedder: Embedder) -> list[PlannedChunk]:
    return plan_chunks(
        parsed(name),
        max_tokens=200,
        overlap_tokens=40,
        count_tokens=embedder.count_tokens,
        locate_tokens=embedder.token_starts,
        section_tokens=400,
    )


def test_page_numbers_and_running_headers_are_not_text() -> None:
    text = parsed("libtasn1.pdf").text
    assert "Chapter 2: ASN.1 structure handling 3" not in text
    assert not re.search(r"^\d+$", text, re.MULTILINE), "a line that is only a page number"


def test_the_table_of_contents_leaders_are_gone_and_ligatures_unfolded() -> None:
    for name in ("libtasn1.pdf", "bzip2-manual.pdf"):
        text = parsed(name).text
        assert ". . . . ." not in text and "....." not in text
        assert not re.search("[\ufb00-\ufb06]", text), name


def test_a_list_running_over_a_page_break_stays_in_one_chunk_citing_both_pages(embedder: Embedder) -> None:
    chunks = planned("libtasn1.pdf", embedder)
    (types,) = [chunk for chunk in chunks if "• ENUMERATED;" in chunk.span.text]
    assert "• UTF8String;" in types.span.text and "doesn’t handle the REAL type" in types.span.text
    assert (types.span.page, types.span.page_end) == (5, 6)
    assert types.span.section_path == "2 ASN.1 structure handling › ASN.1 syntax"


def test_no_chunk_is_a_heading_alone_or_a_scrap(embedder: Embedder) -> None:
    for name in ("libtasn1.pdf", "bzip2-manual.pdf"):
        texts = [chunk.span.text for chunk in planned(name, embedder) if chunk.kind == "text"]
        assert all(len(text) >= 50 for text in texts), [text for text in texts if len(text) < 50]


def test_a_pdf_without_bookmarks_gets_sections_from_its_headings(embedder: Embedder) -> None:
    document = parsed("bzip2-manual.pdf")
    titles = [heading.title for heading in document.headings]
    assert "2.4. OPTIONS" in titles and "2.5. MEMORY MANAGEMENT" in titles
    chunks = planned("bzip2-manual.pdf", embedder)
    assert all(chunk.span.section_path for chunk in chunks)
    (dash,) = [chunk for chunk in chunks if "even if they start with a dash" in chunk.span.text]
    assert dash.span.section_path.endswith("2.4. OPTIONS") and dash.span.page == 8


def test_every_pdf_chunk_carries_boxes_on_its_pages(embedder: Embedder) -> None:
    for chunk in planned("libtasn1.pdf", embedder):
        assert chunk.span.locations, chunk.span.text[:60]
        assert chunk.span.page is not None
        first, last = chunk.span.page, chunk.span.page_end or chunk.span.page
        for page, x0, y0, x1, y1 in chunk.span.locations:
            assert first <= page <= last
            assert 0 <= x0 <= x1 <= 612 and 0 <= y0 < y1 <= 792


def test_a_chunk_starting_mid_line_is_boxed_from_where_it_starts(embedder: Embedder) -> None:
    document = parsed("libtasn1.pdf")
    box = next(
        box for box in document.boxes if "This version doesn’t handle" in document.text[box.start : box.end]
    )
    start = document.text.index("It doesn’t support", box.start)
    x0, x1 = box.span(start, box.end)
    assert box.x0 < x0 < x1 <= box.x1 + 0.5


def test_a_ruled_table_is_a_markdown_table_with_its_caption() -> None:
    document = parsed("berths.pdf")
    assert "Table 1: Maximum draught and length per berth\n\n| Berth | Max draught (m) |" in document.text
    assert "| Oil jetty | 14.2 | 320 | 3 |" in document.text


@pytest.mark.parametrize("name", ["libtasn1.pdf", "bzip2-manual.pdf", "berths.pdf"])
def test_the_text_offsets_of_every_box_lie_in_the_text(name: str) -> None:
    document = parsed(name)
    previous = 0
    for box in document.boxes:
        assert previous <= box.start <= box.end <= len(document.text)
        previous = box.start
    assert list(document.page_starts) == sorted(document.page_starts)


def test_fixtures_are_the_real_files() -> None:
    sizes = {path.name: path.stat().st_size for path in Path(PDFS).glob("*.pdf")}
    assert sizes["libtasn1.pdf"] == 262961 and sizes["bzip2-manual.pdf"] == 183803


def scanned(name: str, pages: list[int], dpi: int, *, blank_pages: int = 0) -> bytes:
    """An image-only PDF of some pages of a real one: what a scanner gives (JPEG pictures), with
    `blank_pages` pages scanned from empty paper after them."""
    import io

    import pypdfium2 as pdfium
    from PIL import Image

    document = pdfium.PdfDocument(str(PDFS / name))
    images = [document[number - 1].render(scale=dpi / 72).to_pil().convert("RGB") for number in pages]
    document.close()
    size = (round(8.5 * dpi), 11 * dpi)
    images += [Image.new("RGB", size, (250, 250, 248)) for _ in range(blank_pages)]
    buffer = io.BytesIO()
    images[0].save(buffer, "PDF", resolution=dpi, save_all=True, append_images=images[1:])
    return buffer.getvalue()


@pytest.mark.slow
def test_a_scanned_pdf_is_read_by_ocr_with_its_boxes_and_confidence(embedder: Embedder, settings) -> None:
    settings.OCR = "auto"
    document = parse_bytes(scanned("libtasn1.pdf", [6], 300), filename="scan.pdf")
    assert document.ocr_pages == (1,) and document.unreadable_pages == ()
    words = set(re.findall(r"[a-z0-9]+", document.text.lower()))
    reference = set(re.findall(r"[a-z0-9]+", parsed("libtasn1.pdf").text.lower()))
    assert {"version", "doesn", "handle", "real", "type", "automatic", "tags"} <= words
    assert len(words & reference) >= 0.9 * len(words)
    chunks = plan_chunks(document, max_tokens=200, overlap_tokens=40, count_tokens=embedder.count_tokens)
    texts = [chunk for chunk in chunks if chunk.kind == "text"]
    assert texts and all(
        chunk.span.ocr_confidence is not None and chunk.span.ocr_confidence > 0.8 for chunk in texts
    )
    for chunk in texts:
        assert all(
            page == 1 and 0 <= x0 < x1 <= 612 and 0 <= y0 < y1 <= 792
            for page, x0, y0, x1, y1 in chunk.span.locations
        )


def test_with_ocr_off_a_scanned_pdf_is_only_its_pictures(settings) -> None:
    settings.OCR = "off"
    document = parse_bytes(scanned("libtasn1.pdf", [6], 72), filename="scan.pdf")
    assert (document.text, document.ocr_pages, len(document.images)) == ("", (), 1)


@pytest.mark.slow
def test_a_150_dpi_scan_is_read_with_its_word_spaces(settings) -> None:
    settings.OCR = "auto"
    document = parse_bytes(scanned("libtasn1.pdf", [6], 150), filename="scan.pdf")
    assert "doesn't handle the REAL type" in document.text.replace("\n", " ")
    assert "constraints are allowed, but no check is done on them." in document.text.replace("\n", " ")


@pytest.mark.slow
@pytest.mark.django_db
def test_a_page_ocr_finds_no_text_on_is_reported_and_the_rest_is_read(
    embedder: Embedder, settings, tmp_path: Path
) -> None:
    from mnemosyne.ingestion.runner import ingest_paths
    from mnemosyne.library.models import Item
    from mnemosyne.library.services import ensure_collection, ensure_library

    settings.OCR = "auto"
    # What is reported of blank pages is checked, not OCR's accuracy (the tests above): the scans
    # are read at their own 150 dpi, a quarter of the default's pixels.
    settings.OCR_DPI = 150
    (tmp_path / "scan.pdf").write_bytes(scanned("libtasn1.pdf", [6], 150, blank_pages=1))
    (tmp_path / "blank.pdf").write_bytes(scanned("libtasn1.pdf", [], 150, blank_pages=2))
    lines: list[str] = []
    collection = ensure_collection(library=ensure_library(name="Scans"), name="all")
    ingest_paths([tmp_path], collection=collection, report=lines.append, embedder=embedder)

    report = "\n".join(lines)
    # The text of the page OCR read; the blank page's picture, which it could not read, as an image.
    assert (
        f"created {tmp_path.name}/scan.pdf (3 chunks; OCR read 2 pages (1, 2); no text found on page 2)"
        in report
    )
    # Nothing but blank pages: only their pictures, and said so.
    assert (
        f"created {tmp_path.name}/blank.pdf (2 chunks; OCR read 2 pages (1, 2); no text found on 2 pages"
        in report
    )
    item = Item.objects.get(source=f"{tmp_path.name}/scan.pdf")
    assert (item.metadata["ocr_pages"], item.metadata["unreadable_pages"]) == ([1, 2], [2])
    kinds = sorted(item.chunks.values_list("kind", "page"))
    assert kinds == [("image", 2), ("text", 1), ("text", 1)]
