"""Opaque, tamper-evident paging cursors: signed with SECRET_KEY, bound to the call they page.

The one cursor API: the tool-call path gives a paging tool its `Page` (page_of), and the tool asks
the page for the next cursor.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.core import signing

from mnemosyne.library.errors import InvalidArgument

_SALT = "mnemosyne.mcp.cursor"


class InvalidCursor(InvalidArgument):
    """A cursor that was modified, is from another listing, or is not a cursor at all."""


def fingerprint(arguments: dict[str, Any]) -> str:
    """A short digest of the arguments a cursor pages through (the cursor itself excluded)."""
    canonical = json.dumps(arguments, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def encode(kind: str, *, offset: int, arguments: dict[str, Any]) -> str:
    return signing.dumps({"k": kind, "o": offset, "f": fingerprint(arguments)}, salt=_SALT, compress=True)


def decode(kind: str, cursor: str, *, arguments: dict[str, Any]) -> int:
    """The offset a cursor points at; InvalidCursor unless it is intact and for these arguments."""
    try:
        state = signing.loads(cursor, salt=_SALT)
    except signing.BadSignature:
        raise InvalidCursor("cursor is not valid (modified, truncated or from another server)") from None
    if not isinstance(state, dict) or state.get("k") != kind or not isinstance(state.get("o"), int):
        raise InvalidCursor(f"cursor is not a {kind} cursor")
    if state.get("f") != fingerprint(arguments):
        raise InvalidCursor("cursor belongs to a different query; repeat the original arguments with it")
    offset: int = state["o"]
    return offset


@dataclass(frozen=True)
class Page:
    """Where a paging tool's page starts, and how it names the next one (the registry builds it)."""

    tool: str
    offset: int
    # The call's arguments without `cursor`: a cursor only continues the call it came from.
    arguments: dict[str, Any]

    def next_cursor(self, next_offset: int | None) -> str | None:
        """The signed cursor of the page at `next_offset`; None (the last page) when there is none."""
        if next_offset is None:
            return None
        return encode(self.tool, offset=next_offset, arguments=self.arguments)


def page_of(tool: str, arguments: dict[str, Any]) -> Page:
    """The page a call asks for: from its `cursor` (checked against the rest of its arguments), else 0."""
    rest = {name: value for name, value in arguments.items() if name != "cursor"}
    cursor = arguments.get("cursor")
    offset = decode(tool, cursor, arguments=rest) if cursor else 0
    return Page(tool=tool, offset=offset, arguments=rest)
