"""The ASGI app (`uvicorn mnemosyne.project.asgi:app`): Starlette at the root, Django mounted for the admin.

/mcp/          streamable HTTP (stateless: any worker answers any request); protocol versions
               2025-11-25 (and earlier, with initialize) and 2026-07-28 (per-request envelope);
               answers are JSON unless the request can be sent notifications (http_gate)
/mcp/sse/      legacy SSE (needs a single worker or sticky routing)

Both MCP endpoints check Host and Origin (the SDK's DNS-rebinding protection: ALLOWED_HOSTS,
MCP_ALLOWED_ORIGINS), refuse bodies over MCP_MAX_REQUEST_BODY_BYTES (413), and pass through
mcp_server.transports.http_gate: a tool call, or a read of library content, is decided there once
(access.decision) and the decision handed to the MCP handlers.
/.well-known/oauth-protected-resource/mcp   RFC 9728 metadata a 401 points at
/.well-known/oauth-authorization-server, /authorize, /token, /register, /revoke
               the built-in OAuth 2.1 authorization server, when MCP_OAUTH=builtin (access.oauth);
               its sign-in and consent pages are Django's, under /oauth/
/mcp/health    {"status": "ok"} after a database round trip, 503 otherwise
/metrics       Prometheus
/console/      the console (console/): libraries, items, chunks, citations
/static/       the admin's and the console's CSS and scripts (htmx), from the apps themselves, so
               the console works with nothing else in front; nginx.conf serves them itself
everything else → Django (admin, OAuth and single sign-on pages)

Django's own ASGI handler refuses non-HTTP scopes (lifespan), hence Starlette at the root.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator
from typing import cast

import mnemosyne  # noqa: F401  (Python 3.11 support for Django; must come first)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemosyne.project.settings")

from django.conf import settings
from django.core.asgi import get_asgi_application

django_app = get_asgi_application()

import anyio  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402
from django.db import connection, connections  # noqa: E402
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp  # noqa: E402
from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecuritySettings  # noqa: E402
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse, Response  # noqa: E402
from starlette.routing import Mount, Route  # noqa: E402
from starlette.types import ASGIApp, Receive, Scope, Send  # noqa: E402

from access import access_policy, oauth_bearer  # noqa: E402
from access.oauth.routes import oauth_routes  # noqa: E402
from mcp_server.server import build_server  # noqa: E402
from mcp_server.transports.admission import Admission  # noqa: E402
from mcp_server.transports.challenges import WELL_KNOWN_PATH, protected_resource_metadata  # noqa: E402
from mcp_server.transports.http_gate import MCPGate  # noqa: E402
from mnemosyne.embedding import get_embedder  # noqa: E402
from mnemosyne.graph import close_graph_store  # noqa: E402
from mnemosyne.lib import (  # noqa: E402
    blocking,
    outages,
    tracing,
)
from mnemosyne.lib.allowed_hosts import AllowedHostsMiddleware  # noqa: E402
from mnemosyne.lib.garbage_collector import set_up_for_serving  # noqa: E402
from mnemosyne.lib.metrics import registry as metrics_registry  # noqa: E402
from mnemosyne.lib.outages import Dependency  # noqa: E402
from mnemosyne.lib.request_ids import RequestIdMiddleware  # noqa: E402
from mnemosyne.library import query_log  # noqa: E402
from mnemosyne.project.database import release_embedded  # noqa: E402

logger = logging.getLogger(__name__)


def transport_security() -> TransportSecuritySettings:
    """The SDK's DNS-rebinding protection: Host must be allowed, and Origin too when a browser sends one.

    Origins are MCP_ALLOWED_ORIGINS when set (e.g. "https://app.example.com", or "http://localhost:*"
    for any port), else http and https on any port of each of ALLOWED_HOSTS.
    """
    if "*" in settings.ALLOWED_HOSTS:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = [*settings.ALLOWED_HOSTS, *(f"{host}:*" for host in settings.ALLOWED_HOSTS)]
    origins = list(settings.MCP_ALLOWED_ORIGINS)
    if not origins:
        origins = [
            f"{scheme}://{host}{port}"
            for host in settings.ALLOWED_HOSTS
            for scheme in ("http", "https")
            for port in ("", ":*")
        ]
    return TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins)


def _ping_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


async def health(request: Request) -> Response:
    began = time.monotonic()
    try:
        await blocking.run(_ping_database)
    except blocking.Unavailable:  # logged once per outage (mnemosyne.lib.outages)
        return _unhealthy()
    except Exception:
        logger.exception("health check: the database did not answer")
        return _unhealthy()
    outages.succeeded(Dependency.DATABASE, began)
    return JSONResponse({"status": "ok"})


def _unhealthy() -> Response:
    return JSONResponse(
        {"status": "unavailable", "reason": "database unreachable"},
        status_code=503,
        headers={"Retry-After": str(outages.RETRY_AFTER_SECONDS)},
    )


async def resource_metadata(request: Request) -> Response:
    return JSONResponse(protected_resource_metadata(request.scope))


async def metrics(request: Request) -> Response:
    return Response(generate_latest(metrics_registry()), media_type=CONTENT_TYPE_LATEST)


async def single_worker_only(scope: Scope, receive: Receive, send: Send) -> None:
    response = JSONResponse(
        {
            "error": "legacy SSE keeps its session in one process, and this server runs "
            f"{settings.SERVE_WORKER_PROCESSES} worker processes: use streamable HTTP at /mcp/, "
            "or start `manage.py serve --workers 1` for SSE clients"
        },
        status_code=503,
    )
    await response(scope, receive, send)


def _agreed_at_start() -> None:
    try:
        access_policy.require_agreement("uvicorn")
    finally:
        # The worker thread's connection would hold the embedded PostgreSQL open at shutdown.
        connections.close_all()


class PolicyAgreement:
    """A server whose LIBRARY_ACCESS disagrees with the database's recorded access policy does not
    start: its lifespan fails with the one line that says so (access_policy.require_agreement),
    before any request is taken — and without a traceback, as `serve` does."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            try:
                await anyio.to_thread.run_sync(_agreed_at_start)
            except access_policy.PolicyDisagreement as exc:
                await receive()  # lifespan.startup
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
        await self.app(scope, receive, send)


def build_app(*, owns_process: bool = True) -> Starlette:
    """The app. One that does not own its process (a test's, served in-process) leaves the
    process's model, graph store, embedded PostgreSQL and tracing to whoever does."""
    tracing.configure()
    mcp = build_server()
    security = transport_security()
    limit = settings.MCP_MAX_REQUEST_BODY_BYTES
    # Each call creates a session manager; we route to them ourselves so /mcp and /mcp/ both work.
    # One answers with JSON bodies, the other streams (mcp_server.transports.http_gate picks per request).
    managers = []
    for json_response in (True, False):
        mcp.streamable_http_app(
            stateless_http=True,
            json_response=json_response,
            transport_security=security,
            max_request_body_size=limit,
        )
        managers.append(mcp.session_manager)
    plain, streaming = managers
    # The body limit comes first: the gate reads the body.
    streamable = RequestBodyLimitMiddleware(
        MCPGate(
            StreamableHTTPASGIApp(streaming),
            json_app=StreamableHTTPASGIApp(plain),
            transport="http",
            admission=Admission(settings.MCP_MAX_CALLS, settings.MCP_MAX_WAITING_CALLS),
        ),
        limit,
    )
    sse_app = mcp.sse_app(
        sse_path="/", message_path="/messages/", transport_security=security, max_request_body_size=limit
    )
    sse: ASGIApp = RequestBodyLimitMiddleware(MCPGate(sse_app, transport="sse"), limit)
    if settings.SERVE_WORKER_PROCESSES > 1:
        # A message POSTed to another worker than the one holding its stream would find no session.
        sse = single_worker_only

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if not owns_process:
            try:
                async with plain.run(), streaming.run():
                    yield
            finally:
                await anyio.to_thread.run_sync(query_log.flush)
            return
        # Load the embedding model before accepting requests, so the first search is not the slow one.
        await anyio.to_thread.run_sync(get_embedder)
        # What was loaded stays for the process's life: the collector stops scanning it, and collects
        # the young generation less often (garbage_collector.py).
        set_up_for_serving()
        try:
            async with plain.run(), streaming.run():
                yield
        finally:
            # The last calls' rows are written before the database may go (query_log.py).
            await anyio.to_thread.run_sync(query_log.flush)
            await anyio.to_thread.run_sync(close_graph_store)
            # uvicorn ends a process on SIGTERM by re-raising it, so exit handlers never run: the
            # embedded PostgreSQL is let go of here (the last process to let go stops it).
            await anyio.to_thread.run_sync(release_embedded)
            await anyio.to_thread.run_sync(tracing.shutdown)

    # /static/ from the apps' own static directories: the console must work offline with nothing
    # in front (behind nginx, nginx.conf serves /static/ from `collectstatic` itself).
    admin = cast(ASGIApp, ASGIStaticFilesHandler(django_app))
    # The built-in OAuth authorization server's endpoints (its pages are Django's, under /oauth/).
    signing_in = oauth_routes() if oauth_bearer.enabled() else []
    return Starlette(
        routes=[
            *signing_in,
            Route("/mcp/health", health, methods=["GET"]),
            Route("/health", health, methods=["GET"]),  # the same, where load balancers look first
            Route("/metrics", metrics, methods=["GET"]),
            Route(WELL_KNOWN_PATH, resource_metadata, methods=["GET"]),
            Mount("/mcp/sse", app=sse),
            Route("/mcp", endpoint=streamable),
            Route("/mcp/", endpoint=streamable),
            Mount("/", app=admin),
        ],
        # Outermost first: every response carries its request id, even a refused Host's 400.
        middleware=[
            *([Middleware(PolicyAgreement)] if owns_process else []),
            Middleware(RequestIdMiddleware),
            Middleware(AllowedHostsMiddleware),
        ],
        lifespan=lifespan,
    )


app = build_app()
