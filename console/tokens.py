"""Tokens and clients (/console/tokens/): a signed-in person creates a token (shown once, with a
copy button and ready-to-paste client configurations), lists and revokes their own tokens and the
applications they connected through OAuth; staff see and revoke every live token and OAuth grant,
a library's managers those that reach their libraries. Every change is a POST
with CSRF, written through access/services.py (the audit rows the admin's writes leave)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TypeVar

from django import forms
from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from access import library_access, services
from access.models import MCPToken, OAuthGrant
from access.oauth import grants
from access.principal import Principal
from console.access import audited, console_view
from mcp_server import client_configs
from mnemosyne.library import selectors
from mnemosyne.library.models import Library

Credential = TypeVar("Credential", MCPToken, OAuthGrant)
# Tokens listed on the page, newest first.
LISTED = 200
EXPIRY_DAYS = ((30, "30 days"), (90, "90 days"), (365, "a year"), (0, "never"))


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, strip=True, help_text="What it is for, e.g. “laptop Claude”.")
    write = forms.BooleanField(required=False, label="May write (upsert_item, delete_item)")
    expires = forms.TypedChoiceField(choices=EXPIRY_DAYS, coerce=int, initial=90, label="Expires after")
    libraries = forms.ModelMultipleChoiceField(
        queryset=Library.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every library you may read, now and later.",
    )

    def __init__(self, *args: object, user: User, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.user = user
        self.fields["libraries"].queryset = selectors.libraries()  # type: ignore[attr-defined]

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        if MCPToken.objects.filter(user=self.user, name=name).exists():
            raise forms.ValidationError("You have a token of that name already; choose another.")
        return name


@dataclass(frozen=True)
class Config:
    title: str
    text: str


@never_cache  # the page may carry a new token's secret: never kept by a browser or a proxy
@console_view
def tokens(request: HttpRequest, principal: Principal) -> HttpResponse:
    user = request.user
    assert isinstance(user, User)  # console_view: signed in
    created: tuple[MCPToken, str] | None = None
    if request.method == "POST":
        form = TokenForm(request.POST, user=user)
        if form.is_valid():
            days = form.cleaned_data["expires"]
            try:
                created = services.create_token(
                    user=user,
                    name=form.cleaned_data["name"],
                    scopes=["read", "write"] if form.cleaned_data["write"] else ["read"],
                    libraries=list(form.cleaned_data["libraries"]) or None,
                    expires_at=timezone.now() + dt.timedelta(days=days) if days else None,
                    actor=user.get_username(),
                    address=request.META.get("REMOTE_ADDR", ""),
                )
            except ValueError as exc:
                form.add_error(None, str(exc))
            else:
                form = TokenForm(user=user)
    else:
        form = TokenForm(user=user)
    mcp_url = f"{base_url_of(request)}/mcp/"
    return render(
        request,
        "console/tokens.html",
        {
            "form": form,
            "created": created[0] if created else None,
            "raw": created[1] if created else "",
            "configs": _configs(mcp_url, created[1]) if created else [],
            "install_links": _install_links(mcp_url, created[1]) if created else [],
            "own": MCPToken.objects.filter(user=user)
            .prefetch_related("libraries")
            .order_by("-created_at")[:LISTED],
            "others": _others(user),
            "own_grants": OAuthGrant.objects.filter(user=user, revoked_at__isnull=True)
            .select_related("client")
            .prefetch_related("libraries")
            .order_by("-created_at")[:LISTED],
            "other_grants": _other_grants(user),
            "mcp_url": mcp_url,
        },
    )


def base_url_of(request: HttpRequest) -> str:
    """This server as the person's browser reaches it (MCP_PUBLIC_BASE_URL first)."""
    configured: str = settings.MCP_PUBLIC_BASE_URL
    return (configured or request.build_absolute_uri("/")).rstrip("/")


def _configs(url: str, raw: str) -> list[Config]:
    return [
        Config("Claude Code", client_configs.claude_code_command(url, raw)),
        Config(
            "Claude Desktop (claude_desktop_config.json), through mcp-remote (needs Node.js)",
            json.dumps(client_configs.remote_config(url, raw), indent=2),
        ),
        Config(
            "Claude Desktop on this machine, over stdio with this checkout's Python",
            json.dumps(client_configs.stdio_config(raw), indent=2),
        ),
        Config("Cursor (.cursor/mcp.json)", json.dumps(client_configs.cursor_config(url, raw), indent=2)),
        Config("VS Code (.vscode/mcp.json)", json.dumps(client_configs.vscode_config(url, raw), indent=2)),
    ]


def _install_links(url: str, raw: str) -> list[tuple[str, str]]:
    """One-click installs, where hosts offer them: (label, link)."""
    return [
        ("Install in Cursor", client_configs.cursor_install_link(url, raw)),
        ("Install in VS Code", client_configs.vscode_install_link(url, raw)),
    ]


def _others(user: User) -> list[MCPToken]:
    """Other people's live tokens this person may revoke: all of them for staff, those that reach
    a library they manage for a manager, none for anyone else."""
    live = (
        MCPToken.objects.exclude(user=user)
        .filter(revoked_at__isnull=True)
        .select_related("user")
        .prefetch_related("libraries")
        .order_by("-created_at")
    )
    if user.is_staff or user.is_superuser:
        return list(live[:LISTED])
    return [token for token in live[: LISTED * 5] if _may_revoke(user, token)][:LISTED]


def _other_grants(user: User) -> list[OAuthGrant]:
    """Other people's live OAuth grants this person may revoke (as for tokens)."""
    live = (
        OAuthGrant.objects.exclude(user=user)
        .filter(revoked_at__isnull=True)
        .select_related("user", "client")
        .prefetch_related("libraries")
        .order_by("-created_at")
    )
    if user.is_staff or user.is_superuser:
        return list(live[:LISTED])
    return [grant for grant in live[: LISTED * 5] if _may_revoke(user, grant)][:LISTED]


def _may_revoke(user: User, credential: MCPToken | OAuthGrant) -> bool:
    if credential.user_id == user.pk or user.is_staff or user.is_superuser:
        return True
    managed = library_access.reach_of(user).managed
    return bool(managed) and _reaches(credential, managed)  # type: ignore[arg-type]


def _revocable(found: QuerySet[Credential], user: User) -> Credential:
    """The token or grant asked for, if this person may revoke it; else 404, as for none."""
    credential = found.select_related("user").first()
    if credential is None or not _may_revoke(user, credential):
        raise Http404("no such token or application")
    return credential


def _reaches(credential: MCPToken | OAuthGrant, libraries: frozenset[int]) -> bool:
    """Whether the token or grant reads one of `libraries` (its owner's reach, within its own)."""
    own = frozenset(library.pk for library in credential.libraries.all()) or None
    readable = library_access.reach_of(credential.user).narrowed(own).readable
    return readable is None or bool(readable & libraries)


@require_POST
@console_view
def revoke(request: HttpRequest, principal: Principal, token_id: int) -> HttpResponse:
    user = request.user
    assert isinstance(user, User)
    token = _revocable(MCPToken.objects.filter(pk=token_id), user)
    services.revoke_token(token=token, actor=user.get_username(), address=request.META.get("REMOTE_ADDR", ""))
    return HttpResponseRedirect(reverse("console:tokens"))


@require_POST
@console_view
def revoke_grant(request: HttpRequest, principal: Principal, grant_id: int) -> HttpResponse:
    """Disconnect an application: its OAuth grant and every token issued under it stop working."""
    user = request.user
    assert isinstance(user, User)
    grant = _revocable(OAuthGrant.objects.filter(pk=grant_id), user)
    grants.revoke_grant(grant)
    audited(principal, "revoke_oauth_grant", "ok", grant=grant.pk)
    return HttpResponseRedirect(reverse("console:tokens"))
