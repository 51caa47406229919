"""Links in answers: where a person opens a chunk at its passage (the console's citation viewer)."""

from __future__ import annotations

from django.conf import settings

from access import decision


def base_url() -> str:
    """This server as the caller reaches it: MCP_PUBLIC_BASE_URL, else the request's own scheme and
    Host (HTTP), else this machine on PORT (stdio, gRPC)."""
    allowed = decision.current()
    found = allowed.base_url if allowed is not None and allowed.base_url else ""
    configured: str = settings.MCP_PUBLIC_BASE_URL
    return (configured or found or f"http://127.0.0.1:{settings.PORT}").rstrip("/")


def citation_url(chunk_uid: str) -> str:
    """The citation viewer at the chunk's passage (the viewer asks whoever opens it to sign in)."""
    return f"{base_url()}/console/chunks/{chunk_uid}#passage"
