"""Failed logins (the admin's, the console's and OAuth sign-in's) throttled per client address
(ADMIN_LOGIN_FAILURES_PER_MINUTE): each failure Django reports (the `user_login_failed` signal)
counts; an address over the limit gets 429 for the rest of the minute on the login forms — the
right password too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.signals import user_login_failed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from access import throttles


class LoginThrottleMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path in (
            reverse("admin:login"),
            reverse("oauth-login"),
            reverse("console:sign-in"),
        ):
            wait = throttles.blocked(throttles.LOGIN, _address(request))
            if wait is not None:
                response = HttpResponse(
                    "Too many failed logins from this address; try again in a minute.",
                    status=429,
                    content_type="text/plain; charset=utf-8",
                )
                response["Retry-After"] = str(wait)
                return response
        return self.get_response(request)


@receiver(user_login_failed)
def _count_failure(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any
) -> None:
    if request is not None:
        throttles.failed(throttles.LOGIN, _address(request))


def _address(request: HttpRequest) -> str:
    return str(request.META.get("REMOTE_ADDR") or "")
