"""MCP over stdio: the SDK's stdio server, its caller resolved at every request.

The credential comes from the environment, as the MCP authorization spec says of stdio:
`MNEMOSYNE_TOKEN` holds a token (create_mcp_token) whose scopes, tool whitelist, libraries and
rate limits apply as over HTTP, with what its owner reaches *now*: the token is identified again
at every request (server.caller_middleware decides each one), so revoking it, a grant or the
owner takes effect at once. Without a token, `--local` runs as the local operator.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import anyio

from access import identify
from access.principal import Principal
from access.refusals import Refusal
from mcp_server import sdk
from mcp_server.server import build_server
from mnemosyne.embedding import get_embedder

TOKEN_VARIABLE = "MNEMOSYNE_TOKEN"
TRANSPORT = "stdio"


def caller_source(token: str) -> Callable[[], Principal | Refusal]:
    """Who is calling, asked at every request: the token's holder now, or the local operator."""
    operator = identify.local("local")

    def caller() -> Principal | Refusal:
        return identify.identify(token) if token else operator

    return caller


def serve(token: str) -> None:
    """Serve until stdin closes; stdout carries only the protocol."""
    # The model loads meanwhile, so the first search does not wait for all of it.
    threading.Thread(target=get_embedder, name="load-embedder", daemon=True).start()
    server = build_server(caller_source=caller_source(token), transport=TRANSPORT)
    anyio.run(sdk.run_stdio, server)
