"""Sign-ins as audit rows: who, when, from where, how (password or single sign-on), and every
failure (Django's `user_logged_in` / `user_login_failed` signals, and single sign-on's own refusals
through `record_failure`)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.dispatch import receiver
from django.http import HttpRequest

from access.models import MCPAuditEvent

# What a failure row may quote of the name that was tried.
NAME_CHARS = 150


def address_of(request: HttpRequest | None) -> str:
    return str(request.META.get("REMOTE_ADDR") or "")[:64] if request is not None else ""


def _how(request: HttpRequest | None) -> str:
    path = request.path if request is not None else ""
    if "/oidc/" in path:
        return "single sign-on"
    if path.startswith("/oauth/"):
        return "OAuth sign-in page"
    return "admin" if path.startswith("/admin/") else "password"


@receiver(user_logged_in)
def _signed_in(sender: Any, request: HttpRequest | None = None, user: Any = None, **_: Any) -> None:
    MCPAuditEvent.objects.create(
        kind=MCPAuditEvent.Kind.SIGN_IN,
        actor=user.get_username()[:150] if user is not None else "",
        address=address_of(request),
        detail={"how": _how(request)},
    )


@receiver(user_login_failed)
def _failed(sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any) -> None:
    name = str(credentials.get("username") or "")[:NAME_CHARS]
    record_failure(request, name=name, reason="wrong username or password")


def record_failure(request: HttpRequest | None, *, name: str = "", reason: str) -> None:
    MCPAuditEvent.objects.create(
        kind=MCPAuditEvent.Kind.SIGN_IN_FAILED,
        actor=name or "unknown",
        address=address_of(request),
        detail={"how": _how(request), "reason": reason[:300]},
    )
