"""Signing in to the console: the project's accounts (a password, or single sign-on when
OIDC_ISSUER is set), throttled like the admin's (login_throttle.py); signing out is a POST."""

from __future__ import annotations

from django.contrib.auth.views import LoginView, LogoutView


class SignIn(LoginView):
    template_name = "console/sign_in.html"
    redirect_authenticated_user = True

    def get_default_redirect_url(self) -> str:
        return "/console/"


class SignOut(LogoutView):
    next_page = "/console/sign-in/"
