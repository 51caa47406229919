"""The authorization server's HTTP endpoints: the SDK's own routes on our provider, with its RFC 8414
metadata extended (client ID metadata documents, RFC 9207 `iss`), and a database outage answered
503 temporarily_unavailable rather than a 500."""

from __future__ import annotations

from mcp.server.auth.routes import build_metadata, cors_middleware, create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from access import oauth_bearer
from access.oauth import config
from access.oauth.provider import DjangoProvider
from mnemosyne.lib import blocking, outages

METADATA_PATH = "/.well-known/oauth-authorization-server"


def oauth_routes() -> list[BaseRoute]:
    issuer = AnyHttpUrl(oauth_bearer.issuer())
    registration = ClientRegistrationOptions(
        enabled=True, valid_scopes=list(config.SCOPES), default_scopes=list(config.SCOPES)
    )
    revocation = RevocationOptions(enabled=True)
    metadata = build_metadata(issuer, None, registration, revocation)
    metadata.client_id_metadata_document_supported = True
    metadata.authorization_response_iss_parameter_supported = True
    document = metadata.model_dump(mode="json", exclude_none=True)
    # RFC 8414 compares issuers as strings: no trailing slash added by URL parsing.
    document["issuer"] = oauth_bearer.issuer()

    async def serve_metadata(request: Request) -> Response:
        return JSONResponse(document)

    routes: list[BaseRoute] = [
        Route(
            METADATA_PATH,
            endpoint=cors_middleware(serve_metadata, ["GET", "OPTIONS"]),
            methods=["GET", "OPTIONS"],
        )
    ]
    for route in create_auth_routes(DjangoProvider(), issuer, None, registration, revocation):
        if isinstance(route, Route) and route.path != METADATA_PATH:
            routes.append(Route(route.path, endpoint=_OutageAnswered(route.app), methods=route.methods))
    return routes


class _OutageAnswered:
    """A database outage during an OAuth request: 503 with Retry-After, as /mcp answers it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except blocking.Unavailable:
            if started:
                raise
            response = JSONResponse(
                {
                    "error": "temporarily_unavailable",
                    "error_description": "the database is unavailable; retry",
                },
                status_code=503,
                headers={"Retry-After": str(outages.RETRY_AFTER_SECONDS)},
            )
            await response(scope, receive, send)
