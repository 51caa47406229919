"""Who is looking, and whether they may: every console view goes through `console_view`.

A person signed in with a browser session is identified as the API identifies them
(identify.of_user: their grants under LIBRARY_ACCESS=grants), every read in the view is bounded to
the libraries they may see (selectors.library_boundary), and the uids a view names are decided by
the decision's own questions for a door without tools — decision.may_read and may_change: outside
what they see is a 404, exactly as for a uid that does not exist; over the console's limit of
changes a 429.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.urls import reverse

from access import decision, identify, services
from access.credentials import AuthFailure
from access.library_access import reach_of
from access.principal import Principal
from access.refusals import Refusal
from mnemosyne.library import selectors
from mnemosyne.library.errors import NotFound

TRANSPORT = "console"
ConsoleView = Callable[..., HttpResponseBase]


class _OverLimit(Exception):
    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


def console_view(view: ConsoleView) -> Callable[..., HttpResponseBase]:
    """The view, called as view(request, principal, …) for a signed-in person, inside their
    library boundary; anyone else is sent to the console's sign-in page and back."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponseBase:
        found = identify.of_user(request.user)
        if isinstance(found, Refusal):
            return redirect_to_login(request.get_full_path(), reverse("console:sign-in"))
        with selectors.library_boundary(found.library_ids):
            try:
                return view(request, found, *args, **kwargs)
            except NotFound as exc:
                raise Http404(str(exc)) from exc
            except _OverLimit as exc:
                wait = exc.refusal.retry_after or 60
                return HttpResponse(
                    f"{exc.refusal.message} (in {wait} s).",
                    status=429,
                    content_type="text/plain; charset=utf-8",
                    headers={"Retry-After": str(wait)},
                )

    return wrapped


def decide_change(principal: Principal, **uids: str) -> None:
    """Whether this person may change what the uids name: Http404 outside what they see,
    PermissionDenied (403, in words) where they may read but not change, 429 over the console's
    limit of changes (CONSOLE_CHANGES_PER_MINUTE; never a tool's)."""
    _refused(decision.may_change(principal, door=TRANSPORT, **uids))


def audited(principal: Principal, tool: str, outcome: str, **arguments: object) -> None:
    """An audit row for a change made here, as the write tools leave one (who, what, the outcome)."""
    services.record_write_call(
        token=None,
        tool=tool,
        outcome=outcome,
        arguments=arguments,
        actor=principal.actor,
        transport=TRANSPORT,
    )


def managed_libraries(user: AbstractBaseUser | AnonymousUser) -> frozenset[int] | None:
    """The libraries whose query log and evaluation sets this person keeps: every one for staff
    (None), those they manage for a manager; PermissionDenied, in words, for anyone else."""
    managed = None if getattr(user, "is_staff", False) else reach_of(user).managed
    if managed is not None and not managed:
        raise PermissionDenied(
            "This is shown to staff, and to a library's managers for their libraries; you manage none."
        )
    return managed


def may_manage(user: AbstractBaseUser | AnonymousUser, library_id: int) -> bool:
    """Whether this person keeps the library's profile and synonym sets: staff, or its managers."""
    if getattr(user, "is_staff", False):
        return True
    managed = reach_of(user).managed
    return managed is None or library_id in managed


def decide(principal: Principal, **uids: str) -> None:
    """Whether this person may read what the uids name (library_uid, collection_uid, item_uid,
    chunk_uid): Http404 when one lies outside what they see (or does not exist)."""
    _refused(decision.may_read(principal, door=TRANSPORT, **uids))


def _refused(allowed: decision.Allowed | Refusal) -> None:
    if isinstance(allowed, Refusal):
        if allowed.failure == AuthFailure.NOT_FOUND:
            raise Http404(allowed.detail or "not found")
        if allowed.http_status == 429:
            raise _OverLimit(allowed)
        raise PermissionDenied(allowed.message)
