"""The citation viewer (/console/chunks/<chunk_uid>): a chunk in its document.

A PDF chunk is shown on its page(s), drawn by the server (mnemosyne/library/page_images.py), with
the chunk's stored boxes over the passage: each an SVG rect carrying data-page and
data-box="x0,y0,x1,y1" in the coordinates of get_chunk's `locations` (PDF points from the page's
bottom left). Anything else is its text between its neighbours, the chunk marked and scrolled to
(#passage). Breadcrumb, the neighbouring chunks and the original's download come with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import content_disposition_header

from access.principal import Principal
from console.access import console_view, decide
from console.item_text import pieces
from mnemosyne.ingestion import formats
from mnemosyne.library import chunk_reads, selectors
from mnemosyne.library.models import Chunk, Item
from mnemosyne.library.page_images import NoPicture, PageSize, original, page_picture, page_size
from mnemosyne.library.sections import SECTION_SEPARATOR

# A document without pages is shown as its text this many chunks either side of the cited one.
TEXT_WINDOW = 20


@dataclass(frozen=True)
class Box:
    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    # The rect in the page picture's SVG coordinates (points from the top left).
    top: float

    @property
    def data_box(self) -> str:
        return f"{self.x0:g},{self.y0:g},{self.x1:g},{self.y1:g}"

    @property
    def width(self) -> float:
        return max(self.x1 - self.x0, 0.5)

    @property
    def height(self) -> float:
        return max(self.y1 - self.y0, 0.5)


@dataclass(frozen=True)
class DrawnPage:
    number: int
    size: PageSize
    image_url: str
    boxes: list[Box]


@console_view
def chunk(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    decide(principal, chunk_uid=uid)
    detail = chunk_reads.chunk_detail(uid)
    found = detail.chunk
    item = found.item
    pages, no_picture = _drawn_pages(item, found.page, found.page_end, found.locations or [])
    around = [] if pages else _text_around(found)
    return render(
        request,
        "console/chunk.html",
        {
            "chunk": found,
            "text": detail.text,
            "item": item,
            "collection": found.collection,
            "library": found.library,
            "sections": [part for part in found.section_path.split(SECTION_SEPARATOR) if part],
            "previous_uid": detail.previous_uid,
            "next_uid": detail.next_uid,
            "pages": pages,
            "no_picture": no_picture,
            "around": around,
        },
    )


def _drawn_pages(
    item: Item, first: int | None, last: int | None, locations: list[list[float]]
) -> tuple[list[DrawnPage], str]:
    """The chunk's pages with their boxes, or why they cannot be drawn ("" for a non-PDF)."""
    if item.item_type != "pdf" or first is None:
        return [], ""
    pages = []
    for number in range(first, (last or first) + 1):
        try:
            size = page_size(item, number)
        except NoPicture as exc:
            return [], str(exc)
        boxes = [
            Box(int(page), x0, y0, x1, y1, top=size.height - y1)
            for page, x0, y0, x1, y1 in locations
            if int(page) == number
        ]
        url = reverse("console:page-image", args=[item.uid, number])
        pages.append(DrawnPage(number, size, url, boxes))
    return pages, ""


def _text_around(cited: Chunk) -> list[tuple[bool, str]]:
    """The item's text around the cited chunk, as (part of the cited chunk, text) in order, each
    chunk without what it shares with the chunk before (so the text runs on); the cited chunk's
    start, held by the chunk before too, is marked there."""
    window = (
        Chunk.objects.filter(
            item_id=cited.item_id,
            ordinal__gte=cited.ordinal - TEXT_WINDOW,
            ordinal__lte=cited.ordinal + TEXT_WINDOW,
        )
        .order_by("ordinal")
        .defer("embedding", "search_vector")
    )
    shown: list[tuple[bool, str]] = []
    for number, piece in enumerate(pieces(list(window))):
        is_cited = piece.chunk.pk == cited.pk
        text = piece.text if number == 0 or piece.overlap else f"\n\n{piece.text}"
        if is_cited and piece.overlap and shown and shown[-1][1].endswith(piece.overlap):
            before = shown.pop()[1]
            shown.append((False, before[: -len(piece.overlap)]))
            text = piece.overlap + text
        # Chunks that do not overlap meet at a section or paragraph break.
        shown.append((is_cited, text))
    return shown


@console_view
def page_image(request: HttpRequest, principal: Principal, uid: str, number: int) -> HttpResponse:
    decide(principal, item_uid=uid)
    item = selectors.get_item(uid)
    try:
        data = page_picture(item, number)
    except NoPicture as exc:
        raise Http404(str(exc)) from exc
    response = HttpResponse(data, content_type="image/png")
    response["Cache-Control"] = "private, max-age=3600"
    return response


@console_view
def download(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    """The original, as an attachment (never shown inline: it is the document's own bytes)."""
    decide(principal, item_uid=uid)
    item = selectors.get_item(uid)
    try:
        data = original(item)
    except NoPicture as exc:
        raise Http404(str(exc)) from exc
    found = formats.by_item_type(item.item_type)
    content_type = found.mime_types[0] if found is not None else "application/octet-stream"
    response = HttpResponse(data, content_type=content_type)
    response["Content-Disposition"] = _attachment(item, found)
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _attachment(item: Item, found: formats.Format | None) -> str:
    name = PurePosixPath(item.source.split("?")[0]).name or item.uid
    if found is not None and not name.lower().endswith(found.suffixes):
        name = f"{name}{found.suffixes[0]}"
    return content_disposition_header(as_attachment=True, filename=name) or "attachment"
