"""Single sign-on with the organisation's OpenID Connect provider (Keycloak, Entra ID, Okta, Google).

On when OIDC_ISSUER is set. `/oidc/login/` sends the browser to the provider (authorization code
with PKCE S256, a state and a nonce kept in the session); `/oidc/callback/` takes the code back,
checks state, exchanges the code with its verifier, and checks the ID token — signature against the
provider's published keys, issuer, audience (our client id), expiry, nonce — with Authlib (chosen
over mozilla-django-oidc because it checks issuer and audience itself, and over django-allauth
because we need one provider, not a social-accounts framework).

Then the person: found by (issuer, subject) (OIDCIdentity), else created under the provider's
preferred_username (or email, or subject) — an existing local account of that name is never taken
over: an administrator links it in the admin. At each sign-in the groups claim (OIDC_GROUPS_CLAIM, a
list of names) sets the person's membership of the groups the provider manages (created as needed;
groups made by hand are left alone), so library grants to groups follow the provider's groups;
OIDC_STAFF_GROUPS and OIDC_SUPERUSER_GROUPS set the admin flags when given. Every failure is one
line on a page of its own, changes nothing, and is an audit row (sign_in_audit).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from authlib.integrations.base_client import OAuthError
from authlib.integrations.django_client import OAuth
from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, User
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET
from joserfc.errors import JoseError

from access.models import OIDCIdentity, SignInGroup
from access.sign_in_audit import record_failure

logger = logging.getLogger(__name__)

PROVIDER = "oidc"
NEXT_KEY = "mnemosyne_sso_next"
# The backend a session signed in here is bound to (Django stores its path in the session).
SESSION_BACKEND = "access.single_sign_on.SessionOnly"

# One registered client per configuration (settings can differ between test runs of one process).
_clients: dict[tuple[Any, ...], Any] = {}


class SignInRefused(Exception):
    """Why a sign-in is refused: one line, shown to the person and kept in the audit row."""


class SessionOnly(ModelBackend):
    """Keeps sessions working when local passwords are off (OIDC_LOCAL_PASSWORDS=false): it looks
    up the signed-in user of a session but never accepts a password."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        return None


def enabled() -> bool:
    return bool(settings.OIDC_ISSUER)


def passwords_allowed() -> bool:
    return bool(settings.OIDC_LOCAL_PASSWORDS) or not enabled()


def _client() -> Any:
    """Authlib's client for the configured provider (its discovery document and keys are fetched
    on first use and kept)."""
    key = (
        settings.OIDC_ISSUER,
        settings.OIDC_DISCOVERY_URL,
        settings.OIDC_CLIENT_ID,
        settings.OIDC_CLIENT_SECRET,
        tuple(settings.OIDC_SCOPES),
    )
    client = _clients.get(key)
    if client is None:
        registry = OAuth()
        registry.register(
            name=PROVIDER,
            client_id=settings.OIDC_CLIENT_ID,
            client_secret=settings.OIDC_CLIENT_SECRET or None,
            server_metadata_url=settings.OIDC_DISCOVERY_URL
            or settings.OIDC_ISSUER.rstrip("/") + "/.well-known/openid-configuration",
            client_kwargs={
                "scope": " ".join(settings.OIDC_SCOPES),
                "code_challenge_method": "S256",
                "token_endpoint_auth_method": (
                    "client_secret_basic" if settings.OIDC_CLIENT_SECRET else "none"
                ),
                "timeout": settings.OIDC_HTTP_TIMEOUT,
            },
        )
        client = _clients[key] = registry.create_client(PROVIDER)
    return client


def id_token_claims(id_token: str, *, nonce: str, access_token: str = "") -> dict[str, Any]:
    """The claims of an ID token once Authlib has checked its signature against the provider's
    keys, its algorithm against those the provider announces, issuer, audience, expiry and nonce —
    as the callback does for the one the provider sends; SignInRefused says what is wrong."""
    token = {"id_token": id_token, "access_token": access_token or "unused"}
    try:
        claims = _client().parse_id_token(token, nonce=nonce)
    except JoseError as exc:
        raise SignInRefused(f"the identity provider's ID token is not valid ({_reason(exc)})") from None
    except ValueError as exc:
        raise SignInRefused(f"the identity provider's ID token is not valid ({str(exc)[:200]})") from None
    return dict(claims or {})


@require_GET
def begin(request: HttpRequest) -> HttpResponse:
    """Off to the provider; `next` (a path on this site) is where the person lands afterwards."""
    if not enabled():
        raise Http404("single sign-on is off (OIDC_ISSUER)")
    wanted = request.GET.get("next", "")
    safe = url_has_allowed_host_and_scheme(wanted, allowed_hosts={request.get_host()}) and wanted
    request.session[NEXT_KEY] = wanted if safe else "/admin/"
    try:
        return _client().authorize_redirect(request, request.build_absolute_uri(reverse("oidc-callback")))
    except (OAuthError, OSError, ValueError) as exc:
        logger.warning("single sign-on: the provider could not be reached: %s", exc)
        return _refused(request, "the identity provider could not be reached; try again later", status=502)


@require_GET
def callback(request: HttpRequest) -> HttpResponse:
    if not enabled():
        raise Http404("single sign-on is off (OIDC_ISSUER)")
    try:
        claims = _verified_claims(request)
        with transaction.atomic():
            user = person_for(claims)
    except SignInRefused as exc:
        return _refused(request, str(exc))
    login(request, user, backend=SESSION_BACKEND)
    target = request.session.pop(NEXT_KEY, "") or "/admin/"
    return HttpResponseRedirect(target)


def _verified_claims(request: HttpRequest) -> dict[str, Any]:
    try:
        token = _client().authorize_access_token(request)
    except OAuthError as exc:
        if exc.error == "mismatching_state":
            raise SignInRefused(
                "this sign-in could not be matched to one started here (state); start again"
            ) from None
        raise SignInRefused(f"the identity provider refused the sign-in: {exc.error or 'error'}") from None
    except JoseError as exc:
        raise SignInRefused(f"the identity provider's ID token is not valid ({_reason(exc)})") from None
    except (OSError, ValueError) as exc:
        logger.warning("single sign-on: token exchange failed: %s", exc)
        raise SignInRefused("the identity provider could not be reached; try again later") from None
    claims = token.get("userinfo")
    if not claims:
        raise SignInRefused("the identity provider sent no ID token")
    claims = dict(claims)
    if settings.OIDC_GROUPS_CLAIM not in claims:
        # Some providers keep groups out of the ID token: ask the userinfo endpoint, same subject only.
        try:
            more = dict(_client().userinfo(token=token))
        except (OAuthError, OSError, ValueError) as exc:
            logger.warning("single sign-on: userinfo failed: %s", exc)
            more = {}
        if more.get("sub") == claims.get("sub") and settings.OIDC_GROUPS_CLAIM in more:
            claims[settings.OIDC_GROUPS_CLAIM] = more[settings.OIDC_GROUPS_CLAIM]
    return claims


def _reason(exc: JoseError) -> str:
    error = getattr(exc, "error", "") or type(exc).__name__
    description = getattr(exc, "description", "") or ""
    return f"{error}: {description}"[:200] if description else str(error)[:200]


@dataclass(frozen=True)
class Claims:
    issuer: str
    subject: str
    username: str
    email: str
    groups: list[str]


def read_claims(claims: dict[str, Any]) -> Claims:
    issuer, subject = str(claims.get("iss") or ""), str(claims.get("sub") or "")
    if not issuer or not subject:
        raise SignInRefused("the ID token has no issuer or subject")
    groups = claims.get(settings.OIDC_GROUPS_CLAIM, [])
    if not isinstance(groups, list) or not all(isinstance(name, str) and name.strip() for name in groups):
        raise SignInRefused(
            f"the identity provider's {settings.OIDC_GROUPS_CLAIM!r} claim is not a list of group names"
        )
    if any(len(name) > 150 for name in groups):
        raise SignInRefused("a group name in the identity provider's groups claim is over 150 characters")
    email = str(claims.get("email") or "")
    username = str(claims.get(settings.OIDC_USERNAME_CLAIM) or email or subject)
    return Claims(issuer, subject, username[:150], email[:254], sorted({name.strip() for name in groups}))


def person_for(raw: dict[str, Any]) -> User:
    """The user these verified claims sign in (created the first time), groups and flags updated."""
    claims = read_claims(raw)
    identity = (
        OIDCIdentity.objects.select_related("user")
        .filter(issuer=claims.issuer, subject=claims.subject)
        .first()
    )
    if identity is None:
        if User.objects.filter(username=claims.username).exists():
            raise SignInRefused(
                f"a local account named {claims.username!r} already exists; an administrator can link "
                "it to this sign-in in the admin (OIDC identities)"
            )
        user = User.objects.create_user(username=claims.username, email=claims.email)
        user.set_unusable_password()
        user.save(update_fields=["password"])
        OIDCIdentity.objects.create(user=user, issuer=claims.issuer, subject=claims.subject)
    else:
        user = identity.user
    if not user.is_active:
        raise SignInRefused(f"the account {user.get_username()!r} is deactivated")
    _set_groups(user, claims.groups)
    _set_flags(user, claims.groups)
    return user


def _set_groups(user: User, names: list[str]) -> None:
    wanted = []
    for name in names:
        group, _ = Group.objects.get_or_create(name=name)
        SignInGroup.objects.get_or_create(group=group)
        wanted.append(group)
    managed = set(SignInGroup.objects.values_list("group_id", flat=True))
    current = set(user.groups.values_list("id", flat=True))
    user.groups.remove(*[pk for pk in current & managed if pk not in {group.pk for group in wanted}])
    user.groups.add(*wanted)


def _set_flags(user: User, groups: list[str]) -> None:
    changed = []
    for flag, setting in (("is_staff", "OIDC_STAFF_GROUPS"), ("is_superuser", "OIDC_SUPERUSER_GROUPS")):
        names = getattr(settings, setting)
        if not names:
            continue
        value = bool(set(names) & set(groups))
        if getattr(user, flag) != value:
            setattr(user, flag, value)
            changed.append(flag)
    if changed:
        user.save(update_fields=changed)


def _refused(request: HttpRequest, reason: str, *, status: int = 400) -> HttpResponse:
    record_failure(request, reason=reason)
    response = render(request, "oauth/sign_in_refused.html", {"reason": reason}, status=status)
    response["Cache-Control"] = "no-store"
    return response


def login_links(request: HttpRequest) -> dict[str, Any]:
    """Template context: whether to offer single sign-on and passwords on a sign-in page."""
    return {
        "sso_enabled": enabled(),
        "sso_name": settings.OIDC_PROVIDER_NAME,
        "passwords_allowed": passwords_allowed(),
    }


def same_site_path(url: str) -> bool:
    parts = urlsplit(url)
    return not parts.scheme and not parts.netloc and url.startswith("/")
