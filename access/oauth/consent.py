"""The sign-in and consent pages (Django views): a signed-in user sees which client asks for which
scopes, picks the scopes and libraries to grant, and is sent back to the client with a code (or
with access_denied). The request comes from /authorize signed (provider.py); it cannot be edited."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.auth.views import LoginView
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.utils.csp import CSP
from django.views.decorators.http import require_http_methods
from mcp.server.auth.provider import construct_redirect_uri

from access import library_access, oauth_bearer
from access.models import OAuthClient
from access.oauth import config, grants
from access.oauth.provider import CONSENT_SALT
from mnemosyne.library.models import Library

LOGIN_URL = "/oauth/login/"


def _only_when_enabled() -> None:
    if not oauth_bearer.enabled():
        raise Http404("OAuth sign-in is off (MCP_OAUTH)")


class SignIn(LoginView):
    template_name = "oauth/login.html"

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        _only_when_enabled()
        return super().dispatch(request, *args, **kwargs)


@login_required(login_url=LOGIN_URL)
@require_http_methods(["GET", "POST"])
def consent(request: HttpRequest) -> HttpResponse:
    _only_when_enabled()
    try:
        asked: dict[str, Any] = signing.loads(
            request.GET.get("request", ""), salt=CONSENT_SALT, max_age=config.CONSENT_SECONDS
        )
    except signing.BadSignature:
        return _page(request, "oauth/expired.html", {}, status=400)
    client = OAuthClient.objects.filter(client_id=asked["client_id"]).first()
    if client is None:
        return _page(request, "oauth/expired.html", {}, status=400)
    user = request.user
    assert isinstance(user, User)  # login_required
    offered, libraries = _offer(user, asked["scopes"])
    context = {
        "client": client,
        "redirect_host": urlsplit(asked["redirect_uri"]).netloc or asked["redirect_uri"],
        "offered": offered,
        "refused_write": "write" in asked["scopes"] and "write" not in offered,
        "libraries": libraries,
        "by_grants": library_access.policy() == library_access.GRANTS,
        "error": "",
    }
    if request.method == "GET":
        return _page(request, "oauth/consent.html", context, redirect=asked["redirect_uri"])
    if request.POST.get("decision") != "allow":
        return _back(asked, error="access_denied")
    scopes = [scope for scope in offered if request.POST.get(f"scope_{scope}")]
    chosen = {int(pk) for pk in request.POST.getlist("library") if pk.isdigit()}
    every_library = request.POST.get("all_libraries") == "on"
    if not scopes or not (every_library or chosen):
        context["error"] = "Choose at least one scope and either every library or some of them."
        return _page(request, "oauth/consent.html", context, status=400, redirect=asked["redirect_uri"])
    given = grants.Consent(
        client_id=client.client_id,
        scopes=scopes,
        redirect_uri=asked["redirect_uri"],
        redirect_uri_provided_explicitly=asked["explicit"],
        code_challenge=asked["code_challenge"],
        resource=asked["resource"],
    )
    confined = [] if every_library else [library for library in libraries if library.pk in chosen]
    code = grants.consent(user, given, confined)
    return _back(asked, code=code)


def _offer(user: User, scopes: list[str]) -> tuple[list[str], list[Library]]:
    """The scopes and libraries this user may give a client: under LIBRARY_ACCESS=open, write for
    staff and every library; under grants, the libraries they read and write where they edit."""
    reach = library_access.reach_of(user)
    libraries = Library.objects.order_by("name")
    if reach.readable is not None:
        libraries = libraries.filter(pk__in=reach.readable)
    if library_access.policy() == library_access.OPEN:
        may_write = user.is_staff or user.is_superuser
    else:
        may_write = reach.editable is None or bool(reach.editable)
    return [scope for scope in scopes if scope != "write" or may_write], list(libraries)


def _back(asked: dict[str, Any], **answer: str) -> HttpResponse:
    """Back to the client's redirect URI (any scheme it registered: a native app's too)."""
    location = construct_redirect_uri(
        asked["redirect_uri"], **answer, state=asked["state"], iss=oauth_bearer.issuer()
    )
    response = HttpResponse(status=302)
    response["Location"] = location
    response["Cache-Control"] = "no-store"
    return response


def _page(
    request: HttpRequest, template: str, context: dict[str, Any], *, status: int = 200, redirect: str = ""
) -> HttpResponse:
    response = render(request, template, context, status=status)
    response["Cache-Control"] = "no-store"
    if redirect:
        # The form's answer redirects to the client: the page's form-action must allow its origin.
        parts = urlsplit(redirect)
        origin = f"{parts.scheme}://{parts.netloc}" if parts.netloc else f"{parts.scheme}:"
        policy = dict(settings.SECURE_CSP)
        policy["form-action"] = [CSP.SELF, origin]
        response._csp_config = policy  # type: ignore[attr-defined]  # Django's per-response override
    return response
