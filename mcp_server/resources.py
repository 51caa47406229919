"""Resources: the libraries (listed one by one), and templates for a library, an item and a chunk.

mnemosyne://libraries              every library with its collections (JSON)
mnemosyne://library/{library_uid}  one library with its collections and item counts (JSON)
mnemosyne://item/{item_uid}        an item and the outline of its chunks (JSON)
mnemosyne://chunk/{chunk_uid}      a chunk's full text under a provenance header (Markdown)
mnemosyne://item/{item_uid}/page/{number}
                                   a PDF page as PNG, its size in points in `_meta.page` (the
                                   console's renderer and cache; the evidence app draws the
                                   passage's boxes on it)
mnemosyne://ingestion              items by status (failures with their reason) and upload jobs (JSON)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from django.db.models import Count
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.types import Resource

from mcp_server.tools.ingestion import as_report
from mnemosyne.ingestion.status import ingestion_status
from mnemosyne.lib import blocking, outages
from mnemosyne.lib.outages import Dependency
from mnemosyne.library import chunk_reads, selectors
from mnemosyne.library.errors import NotFound
from mnemosyne.library.models import Library
from mnemosyne.library.page_images import NoPicture, page_picture_and_size
from mnemosyne.storage import StorageError

T = TypeVar("T")
JSON = "application/json"
PAGE_TEMPLATE = "mnemosyne://item/{item_uid}/page/{number}"
PAGE_URI = re.compile(r"^mnemosyne://item/(?P<item_uid>[^/]+)/page/(?P<number>[^/]+)$")
# Far beyond any document's pages; a bigger number is not a page.
MAX_PAGE = 100_000


def _reading(read: Callable[[], T]) -> T:
    """Run a read (on the SDK's worker thread) as a tool call is run: fresh connection, typed errors.

    The caller's library boundary is already set (server.caller_middleware)."""
    try:
        return blocking.bracketed(read)
    except NotFound as exc:
        raise ResourceNotFoundError(str(exc)) from None
    except StorageError:
        raise ResourceError(outages.message(Dependency.CHUNK_STORE)) from None


def _library(library: Library) -> dict[str, Any]:
    return {
        "uid": library.uid,
        "name": library.name,
        "library_type": library.library_type,
        "description": library.description,
        "uri": f"mnemosyne://library/{library.uid}",
    }


def libraries_json() -> str:
    def read() -> str:
        collections = selectors.collections().annotate(item_count=Count("items"))
        by_library: dict[int, list[dict[str, Any]]] = {}
        for collection in collections:
            by_library.setdefault(collection.library_id, []).append(
                {"uid": collection.uid, "name": collection.name, "item_count": collection.item_count}
            )
        return json.dumps(
            {
                "libraries": [
                    {**_library(library), "collections": by_library.get(library.pk, [])}
                    for library in selectors.libraries()
                ]
            },
            indent=2,
        )

    return _reading(read)


def library_json(library_uid: str) -> str:
    def read() -> str:
        library = selectors.get_library(library_uid)
        collections = selectors.collections(library_uid=library_uid).annotate(item_count=Count("items"))
        body = {
            **_library(library),
            "collections": [
                {"uid": c.uid, "name": c.name, "description": c.description, "item_count": c.item_count}
                for c in collections
            ],
        }
        return json.dumps(body, indent=2)

    return _reading(read)


def item_json(item_uid: str) -> str:
    def read() -> str:
        outline = chunk_reads.item_outline(item_uid)
        item = outline.item
        body = {
            "uid": item.uid,
            "title": item.title,
            "item_type": item.item_type,
            "source": item.source,
            "embedding_status": item.embedding_status,
            "embedding_error": item.embedding_error,
            "chunk_count": item.chunk_count,
            "organisation": item.organisation,
            "doc_type": item.document_type,
            "date": item.document_date.isoformat() if item.document_date else None,
            "period": item.period,
            "metadata": {key: value for key, value in item.metadata.items() if key != "ingest_config"},
            "collection": {"uid": item.collection.uid, "name": item.collection.name},
            "library": {"uid": item.collection.library.uid, "name": item.collection.library.name},
            "chunks": [
                {
                    "chunk_uid": chunk.uid,
                    "uri": f"mnemosyne://chunk/{chunk.uid}",
                    "ordinal": chunk.ordinal,
                    "kind": chunk.kind,
                    "section": chunk.section_path,
                    "page": chunk.page,
                    "preview": " ".join(chunk.text_preview.split())[:160],
                }
                for chunk in outline.chunks
            ],
            "chunks_truncated": outline.truncated,
        }
        return json.dumps(body, indent=2)

    return _reading(read)


def chunk_markdown(chunk_uid: str) -> str:
    def read() -> str:
        detail = chunk_reads.chunk_detail(chunk_uid)
        chunk = detail.chunk
        where = " › ".join(part for part in (chunk.item.title, chunk.section_path) if part)
        page = f" (page {chunk.page})" if chunk.page else ""
        lines = [
            f"# {where}{page}",
            "",
            f"- chunk_uid: {chunk.uid} (cite this)",
            f"- item: {chunk.item.uid}, {chunk.item.source}",
            f"- collection: {chunk.collection.name} ({chunk.collection.uid}); "
            f"library: {chunk.library.name} ({chunk.library.uid})",
            f"- characters {chunk.char_start}-{chunk.char_end}",
            f"- previous chunk: {detail.previous_uid or 'none'}; next chunk: {detail.next_uid or 'none'}",
            "",
            detail.text,
        ]
        return "\n".join(lines)

    return _reading(read)


def page_reference(uri: str) -> tuple[str, int] | None:
    """(item uid, page number) of a page picture's URI, or None when the URI is not one."""
    found = PAGE_URI.match(uri)
    if found is None:
        return None
    number = found["number"]
    if not number.isascii() or not number.isdigit() or not 1 <= int(number) <= MAX_PAGE:
        raise ResourceNotFoundError("no such page")
    return found["item_uid"], int(number)


def page_contents(item_uid: str, number: int) -> ReadResourceContents:
    """The page as PNG with its size in PDF points (`_meta.page`), read as the caller (the library
    boundary the middleware set): an item it cannot see is no item at all. The SDK's templates
    give one `_meta` for every read, so `MnemosyneServer.read_resource` answers these itself."""

    def read() -> ReadResourceContents:
        item = selectors.get_item(item_uid)
        try:
            picture, size = page_picture_and_size(item, number)
        except NoPicture as exc:
            raise ResourceNotFoundError(
                f"page {number} of item {item_uid!r} cannot be shown: {exc}"
            ) from None
        meta = {"page": {"number": number, "width": size.width, "height": size.height}}
        return ReadResourceContents(content=picture, mime_type="image/png", meta=meta)

    return _reading(read)


def page_png(item_uid: str, number: str) -> bytes:
    """The template's own reading, for resources/templates/list (reads arrive through
    `MnemosyneServer.read_resource`, which gives `page_contents` with the page's size)."""
    reference = page_reference(PAGE_TEMPLATE.format(item_uid=item_uid, number=number))
    if reference is None:
        raise ResourceNotFoundError("no such page")
    content = page_contents(*reference).content
    return content if isinstance(content, bytes) else content.encode()


def ingestion_json() -> str:
    """What get_ingestion_status answers without arguments."""

    def read() -> str:
        return as_report(ingestion_status()).model_dump_json(indent=2)

    return _reading(read)


def library_resources() -> list[Resource]:
    """One listed resource per library (resources/list), beside the static ones."""

    def read() -> list[Resource]:
        return [
            Resource(
                uri=f"mnemosyne://library/{library.uid}",
                name=f"library-{library.uid}",
                title=library.name,
                description=library.description or f"The {library.library_type} library {library.name}.",
                mime_type=JSON,
            )
            for library in selectors.libraries()
        ]

    return _reading(read)


def register(server: MCPServer) -> None:
    server.resource(
        "mnemosyne://libraries",
        name="libraries",
        title="Libraries",
        description="Every library with its collections and their item counts.",
        mime_type=JSON,
    )(libraries_json)
    server.resource(
        "mnemosyne://library/{library_uid}",
        name="library",
        title="A library",
        description="One library with its collections (uids for search and list_items) and item counts.",
        mime_type=JSON,
    )(library_json)
    server.resource(
        "mnemosyne://item/{item_uid}",
        name="item",
        title="An item",
        description="An item's provenance, status and metadata, and its chunks in order (uid, section, page, "
        "a preview): the document's outline.",
        mime_type=JSON,
    )(item_json)
    server.resource(
        "mnemosyne://ingestion",
        name="ingestion",
        title="Ingestion status",
        description="Items still pending or processing and those that failed (with the reason), item "
        "counts per status, and upload jobs: whether ingestion finished, and why not.",
        mime_type=JSON,
    )(ingestion_json)
    server.resource(
        "mnemosyne://chunk/{chunk_uid}",
        name="chunk",
        title="A chunk",
        description="A chunk's full text under a header with its provenance (item, section, page, "
        "neighbouring chunks); cite its chunk_uid.",
        mime_type="text/markdown",
    )(chunk_markdown)
    server.resource(
        PAGE_TEMPLATE,
        name="page",
        title="A page",
        description="A PDF item's page as a picture (PNG, 144 dpi), its size in PDF points in the contents' "
        "_meta.page: get_chunk's locations are boxes on it, from its bottom left.",
        mime_type="image/png",
    )(page_png)
