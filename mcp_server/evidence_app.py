"""The evidence app: an MCP App (the `io.modelcontextprotocol/ui` extension, the SDK's
`mcp.server.apps`) that a host renders beside the answer to `search` or `get_chunk`.

The tools name the app's `ui://` page in their `_meta.ui.resourceUri`; their results are the same
for every client (a host without Apps shows them as before). The page (apps_ui/evidence.html, one
self-contained file: no script, font or picture from elsewhere) shows each hit's passage under its
library, item, section and page and, for a PDF, the page as a picture with the passage's stored
boxes drawn over it. Everything it shows it asks for through the host, as the same caller: the
chunk by `get_chunk`, the picture by reading `mnemosyne://item/{item_uid}/page/{number}` — the
console's renderer and cache (mnemosyne/library/page_images.py), its size in PDF points in the
contents' `_meta`. So what the app can show is what the caller's token may read, decided by the
same one decision as any other call.

The page builds its DOM from text only (`textContent`, attributes set one by one): no text from a
document is ever parsed as HTML or run.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

from mcp.server.apps import Apps, ResourcePermissions
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver.exceptions import ResourceNotFoundError

from mnemosyne.lib import blocking
from mnemosyne.library import selectors
from mnemosyne.library.errors import NotFound
from mnemosyne.library.page_images import NoPicture, page_picture, page_size

APP_URI = "ui://mnemosyne/evidence.html"
# The tools whose results the app shows.
APP_TOOLS = frozenset({"search", "get_chunk"})
PAGE_TEMPLATE = "mnemosyne://item/{item_uid}/page/{number}"
PAGE_URI = re.compile(r"^mnemosyne://item/(?P<item_uid>[^/]+)/page/(?P<number>[^/]+)$")
HTML = Path(__file__).with_name("apps_ui") / "evidence.html"
# Far beyond any document's pages; a bigger number is not a page.
MAX_PAGE = 100_000


@cache
def html() -> str:
    return HTML.read_text(encoding="utf-8")


def extension() -> Apps:
    """The Apps extension: advertises the capability and serves the app's page."""
    apps = Apps()
    apps.add_html_resource(
        APP_URI,
        html(),
        name="evidence",
        title="Evidence",
        description="Each hit's passage on its page, with the passage's boxes drawn: next and previous "
        "hit, open it in the console, copy the citation.",
        # Copy the citation: the clipboard is the one permission it asks for.
        permissions=ResourcePermissions(clipboard_write={}),
        prefers_border=True,
    )
    return apps


def tool_meta(name: str) -> dict[str, Any]:
    """What a tool's `_meta` carries for the app: the page that shows its result, if any."""
    return {"ui": {"resourceUri": APP_URI}} if name in APP_TOOLS else {}


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
    boundary the middleware set): an item it cannot see is no item at all."""

    def read() -> ReadResourceContents:
        try:
            item = selectors.get_item(item_uid)
            picture = page_picture(item, number)
            size = page_size(item, number)
        except NotFound as exc:
            raise ResourceNotFoundError(str(exc)) from None
        except NoPicture as exc:
            raise ResourceNotFoundError(
                f"page {number} of item {item_uid!r} cannot be shown: {exc}"
            ) from None
        meta = {"page": {"number": number, "width": size.width, "height": size.height}}
        return ReadResourceContents(content=picture, mime_type="image/png", meta=meta)

    return blocking.bracketed(read)


def page_picture_bytes(item_uid: str, number: str) -> bytes:
    """The template's own reading, for resources/templates/list (reads arrive through
    `MnemosyneServer.read_resource`, which gives `page_contents` with the page's size)."""
    reference = page_reference(PAGE_TEMPLATE.format(item_uid=item_uid, number=number))
    if reference is None:
        raise ResourceNotFoundError("no such page")
    content = page_contents(*reference).content
    return content if isinstance(content, bytes) else content.encode()
