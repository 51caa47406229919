"""A PDF page as a picture, for the citation viewer: rendered on this server with pypdfium2 (which
reads the PDFs at ingest already) from the original kept beside the item's chunks, and cached
under the data directory, so the browser needs no PDF engine (PDF.js would be a second copy of a
large library to ship and keep up to date, and would hand the whole document to the browser for
one page). The boxes drawn over it are in PDF points from the page's bottom left, as `get_chunk`'s
`locations` give them; the page's size in points comes with the picture.
"""

from __future__ import annotations

import io
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from mnemosyne.library.models import Chunk, Item
from mnemosyne.storage import ChunkNotFound, StorageError, get_chunk_store, keys

# Pixels per PDF point (72 per inch): 2 is 144 dpi, sharp on a laptop, about 200 KB a page.
SCALE = 2.0
CACHE_DIR_NAME = "page-images"
# PDFium is not thread-safe: one render at a time in this process.
_pdfium = threading.Lock()


class NoPicture(Exception):
    """The page cannot be drawn (no original kept, not a PDF, no such page): say why."""


@dataclass(frozen=True)
class PageSize:
    width: float
    height: float


def original(item: Item) -> bytes:
    """The bytes the item was read from (kept since originals are), else NoPicture."""
    key = Chunk.objects.filter(item=item).values_list("storage_key", flat=True).first()
    if key is None:
        raise NoPicture("the item has no chunks")
    try:
        return get_chunk_store().get(keys.original_key(keys.prefix_of(key)))
    except ChunkNotFound as exc:
        raise NoPicture(
            "its original was not kept (it was read before originals were); ingest it again"
        ) from exc
    except StorageError as exc:
        raise NoPicture("the chunk store cannot be read just now") from exc


def _cache_path(item: Item, number: int) -> Path:
    digest = item.content_hash[:16] or "unversioned"
    return settings.MNEMOSYNE_DATA_DIR / CACHE_DIR_NAME / item.uid / f"{digest}-{number}-{SCALE:g}.png"


def page_picture(item: Item, number: int) -> bytes:
    """The page (1-based) as PNG; drawn the first time, then read from the cache."""
    path = _drawn(item, number)
    return path.read_bytes()


def page_size(item: Item, number: int) -> PageSize:
    """The page's size in points (the picture drawn first if it is not yet)."""
    return _size_beside(_drawn(item, number))


def page_picture_and_size(item: Item, number: int) -> tuple[bytes, PageSize]:
    """The page as PNG and its size in points, drawn (or found in the cache) once for both."""
    path = _drawn(item, number)
    return path.read_bytes(), _size_beside(path)


def _size_beside(path: Path) -> PageSize:
    width, height = (float(part) for part in path.with_suffix(".size").read_text().split())
    return PageSize(width, height)


def _drawn(item: Item, number: int) -> Path:
    """The cached picture's path, the page drawn into it (with its size beside it) if needed."""
    if item.item_type != "pdf":
        raise NoPicture("only PDF pages are drawn")
    path = _cache_path(item, number)
    size_path = path.with_suffix(".size")
    if path.exists() and size_path.exists():
        return path
    data, size = _render(original(item), number)
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_whole(path, data)
    _write_whole(size_path, f"{size.width} {size.height}".encode())
    return path


def _render(pdf: bytes, number: int) -> tuple[bytes, PageSize]:
    import pypdfium2 as pdfium

    with _pdfium:
        try:
            document = pdfium.PdfDocument(pdf)
        except pdfium.PdfiumError as exc:
            raise NoPicture(f"its original cannot be opened as a PDF ({exc})") from exc
        try:
            if not 1 <= number <= len(document):
                raise NoPicture(f"the document has no page {number}")
            page = document[number - 1]
            width, height = page.get_size()
            image = page.render(scale=SCALE).to_pil()
        except pdfium.PdfiumError as exc:
            raise NoPicture(f"page {number} cannot be drawn ({exc})") from exc
        finally:
            document.close()
    buffer = io.BytesIO()
    image.save(buffer, "PNG", optimize=False)
    return buffer.getvalue(), PageSize(width, height)


def _write_whole(path: Path, data: bytes) -> None:
    partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    partial.write_bytes(data)
    os.replace(partial, path)
