"""MCP token format: a recognisable prefix, 256 random bits, only a SHA-256 digest stored.

Pure functions, no database: the format is checked before any lookup.
"""

from __future__ import annotations

import hashlib
import re
import secrets

TOKEN_PREFIX = "mnem_"
# token_urlsafe(32) yields 43 characters from the URL-safe alphabet.
_TOKEN_RE = re.compile(r"^mnem_[A-Za-z0-9_-]{43}$")
# Characters kept in the clear so a token can be recognised in the admin and in `revoke`.
DISPLAY_PREFIX_LENGTH = 12


def generate_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def is_well_formed(raw: str) -> bool:
    return bool(_TOKEN_RE.fullmatch(raw))


def digest(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def display_prefix(raw: str) -> str:
    return raw[:DISPLAY_PREFIX_LENGTH]
