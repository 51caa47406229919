"""Parsing PDF, HTML, DOCX and image files: pure functions over files these tests build themselves."""

from __future__ import annotations

import base64
import io
import zipfile
import zlib
from typing import Any

import docx
import pytest
from docx.shared import Inches
from PIL import Image
from pypdf import PdfReader, PdfWriter

from mnemosyne.ingestion.chunking import SECTION_SEPARATOR, ChunkSpan, assign_pages
from mnemosyne.ingestion.documents import UnreadableFile
from mnemosyne.ingestion.parsers import pdf
from mnemosyne.ingestion.parsing import parse_bytes
from tests.documents import jpeg_bytes, outlined_pdf, pdf_bytes, png_bytes, report_pdf
from tests.ingestion.test_chunking import chunk


def encrypted(data: bytes, *, user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password="owner-secret")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def test_a_pdf_records_where_each_page_starts_in_its_text() -> None:
    parsed = parse_bytes(report_pdf(), filename="report.pdf")
    assert (parsed.title, parsed.item_type, parsed.markdown) == ("Tidal Report", "pdf", False)
    assert len(parsed.page_starts) == 3
    assert parsed.page_starts[0] == 0
    assert parsed.text[parsed.page_starts[1] :].startswith("Barrages hold back water.")
    assert parsed.text[parsed.page_starts[2] :].startswith("Turbines turn in the stream.")
    assert parsed.text[: parsed.page_starts[1]].rstrip().endswith("The moon drives them.")


def test_assign_pages_puts_a_chunk_from_page_three_on_page_three() -> None:
    parsed = parse_bytes(report_pdf(), filename="report.pdf")
    spans = chunk(parsed.text, max_tokens=6, markdown=False)
    paged = assign_pages(spans, parsed.page_starts)
    pages = {span.text.splitlines()[0]: span.page for span in paged}
    assert pages["Tides rise twice a day."] == 1
    assert pages["Turbines turn in the stream."] == 3
    assert [span.text for span in paged] == [span.text for span in spans]


def test_assign_pages_skips_empty_pages_and_leaves_unpaged_spans_alone() -> None:
    spans = [ChunkSpan("a", 0, 1, "", 1), ChunkSpan("b", 10, 11, "", 1), ChunkSpan("c", 12, 13, "", 1)]
    # Page 2 is empty: it starts where page 3 does.
    assert [s.page for s in assign_pages(spans, [0, 10, 10, 12])] == [1, 3, 4]
    assert assign_pages(spans, []) == spans


def test_a_pdf_without_a_title_is_titled_by_its_filename_and_skips_blank_pages() -> None:
    parsed = parse_bytes(pdf_bytes([["First."], [], ["Third."]]), filename="annual_report-2024.pdf")
    assert parsed.title == "annual report 2024"
    assert parsed.text == "First.\n\nThird."
    spans = assign_pages(chunk(parsed.text, max_tokens=1, markdown=False), parsed.page_starts)
    assert [s.page for s in spans] == [1, 3]


def test_pdf_images_are_extracted_with_mime_type_page_and_caption() -> None:
    parsed = parse_bytes(report_pdf(), filename="report.pdf")
    png, jpeg = parsed.images
    assert (png.mime_type, png.page, png.caption) == ("image/png", 2, "Figure 1: A barrage at low tide")
    assert parsed.text[png.char_offset :].startswith("Figure 1:")
    assert Image.open(io.BytesIO(png.data)).size == (40, 30)
    # Without a figure line, the opening of the page describes the image.
    assert (jpeg.mime_type, jpeg.page, jpeg.char_offset) == ("image/jpeg", 3, parsed.page_starts[2])
    assert jpeg.caption == "Turbines turn in the stream. They resemble wind turbines."


def test_a_pdf_image_declaring_too_many_pixels_is_skipped_before_decoding(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bomb = ("FlateDecode", zlib.compress(b"\x00" * 30), 10_000, 10_000)
    page = ["The text survives its picture."]  # enough text that the page is not taken for a scan
    parsed = parse_bytes(pdf_bytes([page], images={0: bomb}), filename="bomb.pdf")
    assert (parsed.text, parsed.images, parsed.ocr_pages) == (page[0], (), ())
    assert "image too large (10000x10000 pixels" in caplog.text


def test_an_encrypted_pdf_is_unreadable_and_says_it_is_encrypted() -> None:
    with pytest.raises(UnreadableFile, match="encrypted PDF"):
        parse_bytes(encrypted(report_pdf(), user_password="secret"), filename="locked.pdf")


def test_a_pdf_encrypted_with_an_empty_password_opens() -> None:
    parsed = parse_bytes(encrypted(report_pdf(), user_password=""), filename="permissions-only.pdf")
    assert parsed.text.startswith("Tides rise twice a day.")


def test_a_truncated_pdf_is_unreadable_with_the_pdf_librarys_reason() -> None:
    with pytest.raises(UnreadableFile, match=r"not a readable PDF: .+"):
        parse_bytes(report_pdf()[:300], filename="cut.pdf")


def test_a_pdf_with_neither_text_nor_images_is_reported_as_probably_scanned() -> None:
    with pytest.raises(UnreadableFile, match=r"no extractable text \(scanned PDF\?\)"):
        parse_bytes(pdf_bytes([[], []]), filename="scan.pdf")


def test_only_the_first_max_pdf_pages_are_read(settings: Any) -> None:
    settings.INGEST_MAX_PAGES = 2
    parsed = parse_bytes(report_pdf(), filename="report.pdf")
    assert len(parsed.page_starts) == 2
    assert "Turbines" not in parsed.text


def test_an_error_inside_the_pdf_library_becomes_unreadable_file(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*args: object, **kwargs: object) -> object:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(pdf, "page_text", explode)
    with pytest.raises(UnreadableFile, match="cannot parse pdf file: maximum recursion depth exceeded"):
        parse_bytes(report_pdf(), filename="report.pdf")


def test_a_library_error_carrying_a_traceback_is_said_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*args: object, **kwargs: object) -> object:
        message = 'Traceback (most recent call last):\n  File "x.py", line 1\nRuntimeError: bad_alloc'
        raise RuntimeError(message)

    monkeypatch.setattr(pdf, "page_text", explode)
    with pytest.raises(UnreadableFile) as raised:
        parse_bytes(report_pdf(), filename="report.pdf")
    assert str(raised.value) == "cannot parse pdf file: RuntimeError: bad_alloc"


# --- HTML -----------------------------------------------------------------------------------------

EMBEDDED_PNG = "data:image/png;base64," + base64.b64encode(png_bytes()).decode()
ARTICLE_HTML = f"""<!doctype html><html><head><title>Tidal Energy | Ocean Blog</title></head><body>
<header><div class="logo">ACME Oceans</div>
<nav><a href="/">Home</a> <a href="/shop">Shop now</a></nav></header>
<aside>Subscribe to our newsletter for weekly updates</aside>
<main><article>
<h1>Understanding Tidal Energy</h1>
<p>Tidal energy is a form of hydropower that converts the energy of tides into electricity.
It is more predictable than wind and solar power, which makes it attractive to grid operators.</p>
<h2>How it works</h2>
<p>Tidal stream generators use the kinetic energy of moving water to power turbines, in a similar
way to wind turbines that use the wind to power theirs.</p>
<img src="https://cdn.example.com/turbine.jpg" alt="A tidal turbine lowered into the sea">
<p>The barrage method uses a dam across an estuary; water flows through turbines as the tide turns.</p>
<img src="{EMBEDDED_PNG}" alt="Diagram of a tidal barrage">
<h2>Drawbacks</h2>
<p>The environmental impact on estuaries is significant and the up-front costs are high, which has
slowed adoption in many countries around the world.</p>
</article></main>
<footer>Copyright 2024 ACME Oceans. All rights reserved.</footer>
</body></html>"""


def test_html_keeps_the_article_and_its_headings_and_drops_the_page_furniture() -> None:
    parsed = parse_bytes(ARTICLE_HTML.encode(), filename="tidal.html")
    assert (parsed.title, parsed.item_type, parsed.markdown) == ("Tidal Energy | Ocean Blog", "html", True)
    assert "# Understanding Tidal Energy" in parsed.text
    assert "## How it works" in parsed.text
    assert "more predictable than wind and solar" in parsed.text
    for furniture in ("Shop now", "ACME Oceans", "newsletter", "All rights reserved"):
        assert furniture not in parsed.text
    sections = {s.section_path for s in chunk(parsed.text, max_tokens=60, markdown=True)}
    assert f"Understanding Tidal Energy{SECTION_SEPARATOR}Drawbacks" in sections


def test_html_keeps_alt_text_and_only_embedded_images_carry_bytes() -> None:
    parsed = parse_bytes(ARTICLE_HTML.encode(), filename="tidal.html")
    assert "[Image: A tidal turbine lowered into the sea]" in parsed.text
    (image,) = parsed.images
    assert (image.mime_type, image.caption, image.page) == ("image/png", "Diagram of a tidal barrage", None)
    assert image.data == png_bytes()
    assert parsed.text[image.char_offset :].startswith("[Image: Diagram of a tidal barrage]")
    assert "base64" not in parsed.text


def test_html_without_a_title_tag_is_titled_by_its_first_h1() -> None:
    html = b"<body><h1>Field Notes</h1><p>Seals were seen on the northern beach today.</p></body>"
    parsed = parse_bytes(html, filename="notes.htm")
    assert parsed.title == "Field Notes"
    assert "Seals were seen" in parsed.text


def test_a_page_that_is_only_a_picture_keeps_the_picture_and_its_caption() -> None:
    html = f'<html><body><figure><img src="{EMBEDDED_PNG}"><figcaption>A red square</figcaption></figure>'
    parsed = parse_bytes(f"{html}</body></html>".encode(), filename="picture.html")
    assert "[Image: A red square]" in parsed.text
    assert [i.caption for i in parsed.images] == ["A red square"]


def test_an_html_page_without_text_is_unreadable() -> None:
    with pytest.raises(UnreadableFile, match="no readable text"):
        parse_bytes(b"<html><body><nav>Home</nav><script>x()</script></body></html>", filename="empty.html")


# --- DOCX -----------------------------------------------------------------------------------------


def docx_bytes() -> bytes:
    document = docx.Document()
    document.add_heading("Survey Handbook", 0)
    document.add_heading("Equipment", 1)
    document.add_paragraph("Bring a tide table and waterproof notebooks.")
    document.add_heading("Buoys", 2)
    document.add_paragraph("Each buoy logs water height every ten minutes.")
    table = document.add_table(rows=3, cols=2)
    rows = [("Buoy", "Depth (m)"), ("North | A", "12"), ("South", "9")]
    for row, cells in zip(table.rows, rows, strict=True):
        for cell, value in zip(row.cells, cells, strict=True):
            cell.text = value
    document.add_picture(io.BytesIO(png_bytes(colour="green")), width=Inches(1))
    document.add_paragraph("Figure 2: A buoy at anchor", style="Caption")
    document.add_heading("Safety", 1)
    document.add_paragraph("Never survey alone.", style="List Bullet")
    document.add_paragraph("Check the forecast.", style="List Bullet")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_docx_headings_become_the_section_path() -> None:
    parsed = parse_bytes(docx_bytes(), filename="handbook.docx")
    assert (parsed.title, parsed.item_type, parsed.markdown) == ("Survey Handbook", "docx", True)
    spans = chunk(parsed.text, max_tokens=40, markdown=True)

    def path_of(words: str) -> str:
        return next(s.section_path for s in spans if words in s.text)

    assert path_of("Each buoy logs water height") == f"Equipment{SECTION_SEPARATOR}Buoys"
    assert path_of("- Check the forecast.") == "Safety"


def test_a_docx_table_is_a_markdown_table_kept_whole_in_one_chunk() -> None:
    parsed = parse_bytes(docx_bytes(), filename="handbook.docx")
    table = "| Buoy | Depth (m) |\n| --- | --- |\n| North \\| A | 12 |\n| South | 9 |"
    assert table in parsed.text
    spans = chunk(parsed.text, max_tokens=30, overlap_tokens=5, markdown=True)
    assert any(table in s.text for s in spans)


def test_a_docx_inline_picture_is_captioned_by_the_caption_paragraph() -> None:
    parsed = parse_bytes(docx_bytes(), filename="handbook.docx")
    (image,) = parsed.images
    assert (image.mime_type, image.caption, image.page) == ("image/png", "Figure 2: A buoy at anchor", None)
    assert image.data == png_bytes(colour="green")
    assert parsed.text[image.char_offset :].startswith("[Image]\n\nFigure 2: A buoy at anchor")


# --- Images ---------------------------------------------------------------------------------------


def test_a_png_is_described_by_its_text_chunks() -> None:
    data = png_bytes(Description="A seal resting on a rock", Title="Seal")
    parsed = parse_bytes(data, filename="IMG_0042.png")
    assert (parsed.title, parsed.text) == ("Seal", "A seal resting on a rock")
    assert (parsed.item_type, parsed.markdown) == ("image", False)
    (image,) = parsed.images
    assert (image.data, image.mime_type, image.caption, image.page) == (data, "image/png", parsed.text, None)


def test_a_jpeg_is_described_by_its_exif_image_description() -> None:
    parsed = parse_bytes(jpeg_bytes("Low tide at dawn"), filename="photo.JPG")
    assert (parsed.title, parsed.text) == ("photo", "Low tide at dawn")
    assert parsed.images[0].mime_type == "image/jpeg"


def test_an_image_without_a_description_is_described_by_its_filename() -> None:
    parsed = parse_bytes(png_bytes(), filename="harbour_at-night.png")
    assert (parsed.title, parsed.text) == ("harbour at night", "harbour at night")


def test_an_image_over_the_pixel_limit_is_refused() -> None:
    buffer = io.BytesIO()
    Image.new("1", (7100, 7100)).save(buffer, "PNG")  # 50.4 megapixels, a few kilobytes
    with pytest.raises(UnreadableFile, match="image too large"):
        parse_bytes(buffer.getvalue(), filename="huge.png")


def test_a_damaged_image_is_unreadable() -> None:
    with pytest.raises(UnreadableFile):
        parse_bytes(png_bytes()[:40], filename="cut.png")


# --- Junk -----------------------------------------------------------------------------------------

JUNK = bytes(range(256)) * 8


@pytest.mark.parametrize("filename", ["junk.pdf", "junk.docx", "junk.html", "junk.png", "junk.webp"])
def test_binary_junk_is_unreadable_whatever_its_name(filename: str) -> None:
    with pytest.raises(UnreadableFile):
        parse_bytes(JUNK, filename=filename)


def test_a_zip_that_is_not_a_word_document_is_unreadable() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("hello.txt", "hi")
    with pytest.raises(UnreadableFile, match="not a readable DOCX file"):
        parse_bytes(buffer.getvalue(), filename="fake.docx")


def test_a_pdf_outline_gives_headings_where_their_titles_are_printed() -> None:
    parsed = parse_bytes(outlined_pdf(), filename="outlined.pdf")
    assert [(h.level, h.title) for h in parsed.headings] == [
        (1, "1 Tides"),
        (2, "1.1 Barrages"),
        (1, "2 Power generation"),
    ]
    tides, barrages, power = parsed.headings
    assert parsed.text[tides.offset :].startswith("1 Tides")
    assert parsed.text[barrages.offset :].startswith("1.1 Barrages")
    assert parsed.page_starts[1] < barrages.offset < parsed.page_starts[2]
    # A title not printed on its page starts its section at the top of that page.
    assert power.offset == parsed.page_starts[2]


def test_an_outline_entry_pointing_at_a_missing_page_is_passed_over() -> None:
    parsed = parse_bytes(outlined_pdf(stray_entry=True), filename="outlined.pdf")
    assert [h.title for h in parsed.headings] == ["1 Tides", "1.1 Barrages", "2 Power generation"]
    assert "Turbines turn in the stream." in parsed.text


def test_a_pdf_without_an_outline_has_no_headings() -> None:
    assert parse_bytes(report_pdf(), filename="report.pdf").headings == ()
