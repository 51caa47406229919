"""PDF files through PDFium (pypdfium2): the text layer read with its layout, OCR where there is none.

Each page's text layer becomes positioned lines (pdf_text.py); a page without one, or with a garbage
one, is rendered and read by OCR (OCR setting: auto, off, force; ocr.py). Then layout analysis
(mnemosyne.ingestion.layout): running headers, footers and page numbers dropped, columns read in
order, headings from the outline (bookmarks) or else from the fonts, paragraphs, lists and code
rebuilt, ruled tables as Markdown (pdf_tables.py), blocks that run on over a page break joined. The
document's text is that, blocks separated by blank lines; every line's box is kept, so a chunk cites
its pages and the boxes to highlight. Why PDFium: docs/benchmarks.md, "PDF extraction".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pypdfium2 as pdfium
from django.conf import settings
from PIL import Image

from mnemosyne.ingestion import ocr, parser_processes
from mnemosyne.ingestion.documents import (
    ImageAsset,
    ParsedDocument,
    UnreadableFile,
    names_a_file,
    title_from_filename,
)
from mnemosyne.ingestion.layout import lay_out
from mnemosyne.ingestion.layout.assemble import Assembled
from mnemosyne.ingestion.layout.blocks import Block
from mnemosyne.ingestion.layout.headings import OutlineEntry
from mnemosyne.ingestion.layout.lines import Line
from mnemosyne.ingestion.parsers import pdf_images, pdf_tables
from mnemosyne.ingestion.parsers.pdf_text import page_text

logger = logging.getLogger(__name__)

# A page whose text layer has fewer letters and digits than this is taken as having none.
MIN_TEXT_CHARS = 16
# A text layer with more than this share of characters PDFium cannot map to Unicode is garbage.
MAX_UNMAPPED_SHARE = 0.3
# PDFium is not thread-safe: one document is read at a time in a process.
_PDFIUM = threading.Lock()


def parse_pdf(data: bytes, *, filename: str) -> ParsedDocument:
    with _PDFIUM:
        document = _open(data)
        tables = pdf_tables.TableFinder(data)
        try:
            return _parse(document, tables, filename)
        finally:
            tables.close()
            document.close()


def _open(data: bytes) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        reason = str(exc).lower()
        if "password" in reason:
            raise UnreadableFile("encrypted PDF (it needs a password to open)") from exc
        raise UnreadableFile(f"not a readable PDF: {exc}") from exc


def _parse(document: pdfium.PdfDocument, finder: pdf_tables.TableFinder, filename: str) -> ParsedDocument:
    count = len(document)
    if count > settings.INGEST_MAX_PAGES:
        logger.warning("%s has %d pages; reading the first %d", filename, count, settings.INGEST_MAX_PAGES)
        count = settings.INGEST_MAX_PAGES
    pages: list[list[Line]] = []
    heights: list[float] = []
    widths: list[float] = []
    ocr_pages: list[int] = []
    unreadable: list[int] = []
    tables: dict[int, list[Block]] = {}
    images: list[pdf_images.PlacedImage] = []
    for index in range(count):
        page = document[index]
        try:
            height = page.get_height()
            widths.append(page.get_width())
            lines, was_ocr = _page_lines(page, index + 1)
            if was_ocr:
                ocr_pages.append(index + 1)
                if not lines:
                    unreadable.append(index + 1)
            elif pdf_tables.worth_a_look(page):
                tables[index + 1] = finder.find(index, height)
            if not (was_ocr and lines):  # a scanned page's picture is its text, once OCR has read it
                images.extend(pdf_images.placed(page, index + 1))
        finally:
            page.close()
        pages.append(lines)
        heights.append(height)
    assembled = lay_out(pages, heights, outline=_outline(document, count), tables=tables, widths=widths)
    if not assembled.text and not images:
        if ocr_pages:
            raise UnreadableFile(
                f"no extractable text (scanned PDF?); OCR found none on its {len(ocr_pages)} page(s)"
            )
        if settings.OCR == "off":
            raise UnreadableFile("no extractable text (scanned PDF?); OCR is off")
        raise UnreadableFile("no extractable text (scanned PDF?)")
    metadata_title = _metadata_title(document)
    # A scan's type sizes are guessed from OCR boxes: no title is read from them.
    cover = cover_title(pages[0]) if pages and 1 not in ocr_pages else ""
    if names_a_file(metadata_title):
        metadata_title = ""
    return ParsedDocument(
        title=metadata_title or cover or title_from_filename(filename),
        item_type="pdf",
        text=assembled.text,
        markdown=False,
        page_starts=assembled.page_starts,
        images=tuple(_captioned(images, assembled)),
        headings=assembled.headings,
        boxes=assembled.boxes,
        ocr_pages=tuple(ocr_pages),
        unreadable_pages=tuple(unreadable),
    )


def _page_lines(page: pdfium.PdfPage, number: int) -> tuple[list[Line], bool]:
    """The page's lines, from its text layer or by OCR, and whether OCR read them."""
    mode = settings.OCR
    found = page_text(page, number)
    letters = sum(char.isalnum() for line in found.lines for char in line.text)
    garbage = found.characters > 0 and found.unmapped > MAX_UNMAPPED_SHARE * found.characters
    # A page with neither text nor pictures is blank, not scanned.
    scanned = letters < MIN_TEXT_CHARS and pdf_images.has_images(page)
    wanted = mode == "force" or (mode == "auto" and (scanned or garbage))
    if not wanted:
        return found.lines, False
    dpi = settings.OCR_DPI
    # A page read by OCR takes seconds of CPU: the parse's budget grows by a page's.
    parser_processes.allow_more_cpu(settings.INGEST_PARSE_CPU_SECONDS_PER_PAGE)
    try:
        lines = ocr.recognise(_rendered(page, dpi), page=number, scale=72 / dpi, height=page.get_height())
    except ocr.OCRUnavailable as exc:
        logger.warning("page %d needs OCR, which is unavailable: %s", number, exc)
        return found.lines, False
    return lines, True


def _rendered(page: pdfium.PdfPage, dpi: int) -> Image.Image:
    """The page as a picture at `dpi`. A scan of lower resolution is rendered at its own and then
    enlarged with a Lanczos filter: PDFium's own enlargement blurs the gaps between words, and OCR
    of a 150 dpi scan lost most of its spaces that way (docs/benchmarks.md, "OCR")."""
    native = pdf_images.scan_dpi(page)
    if native is None or native >= dpi * 0.95:
        return page.render(scale=dpi / 72).to_pil().convert("RGB")
    image = page.render(scale=native / 72).to_pil().convert("RGB")
    size = (round(page.get_width() * dpi / 72), round(page.get_height() * dpi / 72))
    return image.resize(size, Image.Resampling.LANCZOS)


def _outline(document: pdfium.PdfDocument, count: int) -> list[OutlineEntry]:
    """The outline's entries with a title and a page among the first `count`; [] when unreadable."""
    entries = []
    try:
        for bookmark in document.get_toc(max_depth=8):
            title = " ".join((bookmark.get_title() or "").replace("\x00", "").split())
            destination = bookmark.get_dest()
            index = destination.get_index() if destination is not None else None
            if not title or index is None or not 0 <= index < count:
                continue  # an entry pointing at a page that is not there is passed over
            mode, view = destination.get_view()
            y = float(view[1]) if mode == 1 and len(view) > 1 and view[1] else None
            entries.append(OutlineEntry(level=bookmark.level + 1, title=title, page=index + 1, y=y))
    except Exception:
        # A damaged outline costs the section paths, never the text.
        logger.warning("cannot read the PDF's outline", exc_info=True)
        return []
    return entries


def _captioned(images: list[pdf_images.PlacedImage], assembled: Assembled) -> Iterator[ImageAsset]:
    for image in images:
        page_start = assembled.page_starts[image.page - 1]
        asset = pdf_images.asset(image, assembled.text, assembled.boxes, page_start)
        if asset is not None:
            yield asset


# The cover's title is set at least this much larger than the page's usual line.
COVER_TITLE_SIZE = 1.3
MAX_COVER_TITLE_CHARS = 200


def cover_title(lines: list[Line]) -> str:
    """The title printed on the first page: the lines set in its largest type, the first of them
    and those right under it, when that type is clearly larger than the page's usual one. Text set
    sideways (a margin note) is not a title, nor is anything on a page whose type sizes PDFium
    cannot tell (text drawn at size 1 and scaled)."""
    worded = [
        line
        for line in lines
        if sum(char.isalpha() for char in line.text) >= 3 and line.width >= 2 * line.height
    ]
    if len(worded) < 2:
        return ""
    sizes = sorted(line.size for line in worded)
    usual, largest = sizes[len(sizes) // 2], sizes[-1]
    if largest < COVER_TITLE_SIZE * usual or largest <= 2:
        return ""
    ordered = sorted(worded, key=lambda line: (-line.y1, line.x0))
    first = next(index for index, line in enumerate(ordered) if line.size >= 0.95 * largest)
    title = [ordered[first]]
    for line in ordered[first + 1 :]:
        if line.size < 0.95 * largest or title[-1].y0 - line.y1 > 1.2 * largest:
            break
        title.append(line)
    text = " ".join(" ".join(line.text for line in title).split())
    return text if len(text) <= MAX_COVER_TITLE_CHARS else ""


def _metadata_title(document: pdfium.PdfDocument) -> str:
    try:
        title = document.get_metadata_dict().get("Title", "")
    except Exception:
        return ""
    return " ".join(str(title).replace("\x00", "").split())
