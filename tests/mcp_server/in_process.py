"""The ASGI app served in the test's own process, for HTTP-level checks in the fast tier: requests
go through the app's middleware, the MCP gate and the SDK's transport as over a socket, without a
server process or the model (make test-fast). The full tier's judges talk to real uvicorn."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx
import httpx2
from starlette.types import ASGIApp

from mnemosyne.project.asgi import build_app

# The base URL that means "this process": tests/mcp_server/clients.py's helpers (post, call_all,
# mcp_session) answer it through the app in-process; the in_process_url fixture gives it.
BASE = "http://localhost"


@contextlib.asynccontextmanager
async def _served() -> AsyncIterator[ASGIApp]:
    """The app, its lifespan run around the block."""
    app = build_app(owns_process=False)
    async with app.router.lifespan_context(app):
        yield app


@contextlib.asynccontextmanager
async def asgi_client() -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client whose requests the app answers in-process, its lifespan run around them."""
    async with (
        _served() as app,
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE, timeout=30) as client,
    ):
        yield client


@contextlib.asynccontextmanager
async def asgi_http2(headers: dict[str, str] | None = None) -> AsyncIterator[httpx2.AsyncClient]:
    """The same, as the client the MCP SDK's streamable HTTP transport takes (httpx2)."""
    async with (
        _served() as app,
        httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), base_url=BASE, headers=headers or {}, timeout=30
        ) as client,
    ):
        yield client
