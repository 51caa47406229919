"""The evidence app: an MCP App (the `io.modelcontextprotocol/ui` extension, the SDK's
`mcp.server.apps`) that a host renders beside the answer to `search` or `get_chunk`.

The tools name the app's `ui://` page in their `_meta.ui.resourceUri`; their results are the same
for every client (a host without Apps shows them as before). The page (apps_ui/evidence.html, one
self-contained file: no script, font or picture from elsewhere) shows each hit's passage under its
library, item, section and page and, for a PDF, the page as a picture with the passage's stored
boxes drawn over it. Everything it shows it asks for through the host, as the same caller: the
chunk by `get_chunk`, the picture by reading `mnemosyne://item/{item_uid}/page/{number}`
(resources.py: the console's renderer and cache, its size in PDF points in the contents' `_meta`).
So what the app can show is what the caller's token may read, decided by the same one decision as
any other call.

The page builds its DOM from text only (`textContent`, attributes set one by one): no text from a
document is ever parsed as HTML or run.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from mcp.server.apps import Apps, ResourcePermissions

APP_URI = "ui://mnemosyne/evidence.html"
# The tools whose results the app shows.
APP_TOOLS = frozenset({"search", "get_chunk"})
HTML = Path(__file__).with_name("apps_ui") / "evidence.html"


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
