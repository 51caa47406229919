"""The ASGI app served in the test's own process, for HTTP-level checks in the fast tier: requests
go through the app's middleware, the MCP gate and the SDK's transport as over a socket, without a
server process or the model (make test-fast). The full tier's judges talk to real uvicorn."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx

from mnemosyne.project.asgi import build_app

BASE = "http://localhost"


@contextlib.asynccontextmanager
async def asgi_client() -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client whose requests the app answers in-process, its lifespan run around them."""
    app = build_app(owns_process=False)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE, timeout=30) as client,
    ):
        yield client
