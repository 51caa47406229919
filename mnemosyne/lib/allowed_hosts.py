"""The Host header checked against ALLOWED_HOSTS before anything is built from it.

The MCP transports check Host themselves (the SDK's DNS-rebinding protection), but only once a
request reaches them; the 401 challenge, the RFC 9728 metadata document, health and metrics are
answered earlier and would otherwise advertise whatever host a client claimed. Django's own rules
apply (django.http.request.validate_host: exact names, ".example.com" for a domain and its
subdomains, "*" for any); a request naming another host gets 400.
"""

from __future__ import annotations

from django.conf import settings
from django.http.request import split_domain_port, validate_host
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send


class AllowedHostsMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not allowed(scope):
            await PlainTextResponse(
                "Bad Request: the Host header names a host this server does not serve", 400
            )(scope, receive, send)
            return
        await self.app(scope, receive, send)


def allowed(scope: Scope) -> bool:
    host = next((value for key, value in scope["headers"] if key == b"host"), b"").decode("latin-1")
    domain, _ = split_domain_port(host)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)
