"""Opaque, tamper-evident paging cursors: signed with SECRET_KEY, bound to what they page."""

from __future__ import annotations

import hashlib
import json
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


def start_of(kind: str, cursor: str | None, *, arguments: dict[str, Any]) -> int:
    """Where a page starts: 0 without a cursor, else the cursor's offset (checked)."""
    return decode(kind, cursor, arguments=arguments) if cursor else 0


def after(kind: str, *, offset: int, returned: int, more: bool, arguments: dict[str, Any]) -> str | None:
    """The next_cursor of a page of `returned` rows from `offset`: None when there is no more."""
    return encode(kind, offset=offset + returned, arguments=arguments) if more else None
