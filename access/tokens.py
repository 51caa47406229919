"""MCP token format: a recognisable prefix, 256 random bits, only a SHA-256 digest stored.

Pure functions, no database: the format is checked before any lookup.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from typing import Any

TOKEN_PREFIX = "mnem_"
# token_urlsafe(32) yields 43 characters from the URL-safe alphabet.
_TOKEN_RE = re.compile(r"^mnem_[A-Za-z0-9_-]{43}$")
# Characters kept in the clear so a token can be recognised in the admin and in `revoke`.
DISPLAY_PREFIX_LENGTH = 12


def generate_token(prefix: str = TOKEN_PREFIX) -> str:
    """256 random bits, URL-safe, after `prefix` (ours by default; OAuth's for its codes and tokens)."""
    return prefix + secrets.token_urlsafe(32)


def is_well_formed(raw: str) -> bool:
    return bool(_TOKEN_RE.fullmatch(raw))


def digest(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def display_prefix(raw: str) -> str:
    return raw[:DISPLAY_PREFIX_LENGTH]


# Signed tool results (optional per token).
# Signed tool results: HMAC-SHA256 over tool, arguments, result, nonce and timestamp (pure functions).
#
# The key is the token's SHA-256 digest in hex (what the server stores; the client computes it from
# its raw token). The signed message is five lines joined by "\\n":
#     tool, sha256(canonical arguments), sha256(canonical structured result), nonce, timestamp
# where canonical JSON is json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).


# A request's timestamp may be this far off the server's clock, and a nonce is remembered this long.
NONCE_WINDOW_SECONDS = 300
SIGNATURE_META_KEY = "mnemosyne/signature"


def canonical_sha256(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def signed_message(*, tool: str, arguments: dict[str, Any], result: Any, nonce: str, timestamp: int) -> str:
    return "\n".join([tool, canonical_sha256(arguments), canonical_sha256(result), nonce, str(timestamp)])


def sign(key: str, message: str) -> str:
    return hmac.new(key.encode("ascii"), message.encode("utf-8"), hashlib.sha256).hexdigest()


def signature_block(
    *, key: str, tool: str, arguments: dict[str, Any], result: Any, nonce: str, timestamp: int
) -> dict[str, Any]:
    message = signed_message(tool=tool, arguments=arguments, result=result, nonce=nonce, timestamp=timestamp)
    return {
        "algorithm": "HMAC-SHA256",
        "tool": tool,
        "arguments_sha256": canonical_sha256(arguments),
        "result_sha256": canonical_sha256(result),
        "nonce": nonce,
        "timestamp": timestamp,
        "signature": sign(key, message),
    }


def verify(key: str, block: dict[str, Any], *, arguments: dict[str, Any], result: Any) -> bool:
    """What a client does: recompute the message from what it sent and got, compare in constant time."""
    message = signed_message(
        tool=block["tool"],
        arguments=arguments,
        result=result,
        nonce=block["nonce"],
        timestamp=block["timestamp"],
    )
    return hmac.compare_digest(sign(key, message), block["signature"])


def timestamp_is_fresh(timestamp: int, now: int) -> bool:
    return abs(now - timestamp) <= NONCE_WINDOW_SECONDS
