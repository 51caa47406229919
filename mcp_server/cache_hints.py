"""How long a client may keep each cacheable result, and who may share it (2026-07-28's `ttlMs` and
`cacheScope`, SEP-2549), chosen for how access works here: a result that depends on who asks is
`private` — the tools a caller may call, the libraries it sees, anything read from them — and only
what is the same for every caller is `public`. Listed in docs/clients.md with the reasons.

The SDK fills a result's hint from `BY_METHOD`; a resource read gets the one for its URI
(`for_resource`), set by the server's middleware on 2026-07-28 answers (the fields do not exist
before that revision).
"""

from __future__ import annotations

from typing import Any

from mcp.server.caching import CacheableMethod, CacheHint

MINUTE_MS = 60_000

BY_METHOD: dict[CacheableMethod, CacheHint] = {
    # The server's name, version, capabilities and instructions: the same for every caller, and they
    # change only when the server is upgraded or its settings change (a restart).
    "server/discover": CacheHint(ttl_ms=10 * MINUTE_MS, scope="public"),
    # Only the tools this caller may call: a token's tools change when an administrator edits it.
    # A stale list only shows a tool; every call is decided when it is made.
    "tools/list": CacheHint(ttl_ms=5 * MINUTE_MS, scope="private"),
    # One prompt and the resource templates: the same for every caller, changed by an upgrade only.
    "prompts/list": CacheHint(ttl_ms=10 * MINUTE_MS, scope="public"),
    "resources/templates/list": CacheHint(ttl_ms=10 * MINUTE_MS, scope="public"),
    # One resource per library this caller sees: a new library, or a new grant, shows within a minute.
    "resources/list": CacheHint(ttl_ms=MINUTE_MS, scope="private"),
    # Reads default to "do not keep" (the ingestion status is live); see for_resource.
    "resources/read": CacheHint(ttl_ms=0, scope="private"),
}


def for_resource(uri: str) -> CacheHint:
    """The hint for reading `uri`."""
    if uri.startswith("ui://"):
        # The evidence app's page: one file, the same for everyone, changed by an upgrade only.
        return CacheHint(ttl_ms=60 * MINUTE_MS, scope="public")
    if uri.startswith("mnemosyne://item/") and "/page/" in uri:
        # A page picture of a document the caller may read: as the console serves it (private,
        # an hour); a new version of the document is a new picture.
        return CacheHint(ttl_ms=60 * MINUTE_MS, scope="private")
    if uri.startswith(("mnemosyne://library", "mnemosyne://item/", "mnemosyne://chunk/")):
        # Libraries, outlines and chunks change when documents are ingested again, which is rare
        # within a conversation but should show within a minute.
        return CacheHint(ttl_ms=MINUTE_MS, scope="private")
    return BY_METHOD["resources/read"]


def stamp_resource(result: dict[str, Any], uri: str) -> dict[str, Any]:
    hint = for_resource(uri)
    return {**result, "ttlMs": hint.ttl_ms, "cacheScope": hint.scope}
