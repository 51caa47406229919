"""MCP access tokens: only the SHA-256 digest of a token is stored."""

from __future__ import annotations

import contextlib
import contextvars
import secrets
from collections.abc import Iterator
from datetime import datetime
from typing import Any, NoReturn

from django.conf import settings
from django.db import models
from django.utils import timezone

SCOPES = ("read", "write")


def default_scopes() -> list[str]:
    return ["read"]


class MCPToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mcp_tokens")
    name = models.CharField(max_length=100)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=16, editable=False, help_text="The token's first characters.")
    # Empty means every tool.
    allowed_tools = models.JSONField(default=list, blank=True)
    # "read" and/or "write". New tokens read only; tokens from before scopes existed got both.
    scopes = models.JSONField(default=default_scopes, blank=True)
    # The tenant boundary: empty means every library; otherwise the rest is invisible.
    libraries = models.ManyToManyField("library.Library", blank=True, related_name="+")
    rate_limit_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="Calls per minute across all workers; empty means no limit."
    )
    created_by = models.CharField(max_length=150, blank=True, default="", editable=False)
    sign_results = models.BooleanField(
        default=False, help_text="Results carry an HMAC-SHA256 signature keyed by the token's digest."
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "mcp_server_mcptoken"
        ordering = ["-created_at"]
        verbose_name = "MCP token"
        constraints = [
            models.UniqueConstraint(fields=["user", "name"], name="mcp_token_name_unique_per_user"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    def is_expired(self, now: datetime | None = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or timezone.now())

    def allows_tool(self, tool: str) -> bool:
        return not self.allowed_tools or tool in self.allowed_tools

    def has_scope(self, scope: str) -> bool:
        return scope in (self.scopes or [])


class MCPAuditEvent(models.Model):
    class Kind(models.TextChoices):
        TOKEN_CREATED = "token_created", "Token created"
        TOKEN_REVOKED = "token_revoked", "Token revoked"
        TOKEN_EXTENDED = "token_extended", "Token extended"
        WRITE_TOOL_CALL = "write_tool_call", "Write tool call"
        GRANT_GIVEN = "grant_given", "Library grant given or changed"
        GRANT_REVOKED = "grant_revoked", "Library grant revoked"
        SIGN_IN = "sign_in", "Signed in"
        SIGN_IN_FAILED = "sign_in_failed", "Sign-in failed"
        POLICY_SWITCHED = "policy_switched", "Library access policy switched"

    kind = models.CharField(max_length=32, choices=Kind.choices)
    token = models.ForeignKey(MCPToken, null=True, on_delete=models.SET_NULL, related_name="audit_events")
    actor = models.CharField(max_length=150, help_text="Who did it: a username or 'system'.")
    address = models.CharField(
        max_length=64, blank=True, default="", help_text="From where: the client's address, when known."
    )
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "mcp_server_mcpauditevent"
        ordering = ["-created_at"]
        verbose_name = "MCP audit event"

    def __str__(self) -> str:
        return f"{self.kind} by {self.actor}"


class MCPRateWindow(models.Model):
    """A fixed one-minute window's call count for a token, shared by every worker and host."""

    token = models.ForeignKey(MCPToken, on_delete=models.CASCADE, related_name="+")
    window_start = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "mcp_server_mcpratewindow"
        constraints = [
            models.UniqueConstraint(fields=["token", "window_start"], name="mcp_rate_window_unique"),
        ]


def new_approval_uid() -> str:
    return "apr_" + secrets.token_hex(8)


class MCPApprovalRequest(models.Model):
    """A call to a tool that needs an admin's approval; approved, it may be made once."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"
        USED = "used", "Used"

    uid = models.CharField(max_length=32, unique=True, default=new_approval_uid, editable=False)
    token = models.ForeignKey(MCPToken, null=True, on_delete=models.SET_NULL, related_name="approvals")
    # The caller when it is not one of our tokens ("jwt:<sub>", "anonymous"): only it may use the approval.
    subject = models.TextField(blank=True, default="")
    tool = models.CharField(max_length=100)
    # The exact arguments approved: a re-invocation with other arguments is refused.
    arguments_digest = models.CharField(max_length=64)
    arguments_preview = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    decided_by = models.CharField(max_length=150, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "mcp_server_mcpapprovalrequest"
        ordering = ["-created_at"]
        verbose_name = "MCP approval request"

    def __str__(self) -> str:
        return f"{self.uid} {self.tool} ({self.status})"


class MCPNonce(models.Model):
    """A request nonce seen from a signing token: the same nonce within five minutes is a replay."""

    token = models.ForeignKey(MCPToken, on_delete=models.CASCADE, related_name="+")
    nonce = models.CharField(max_length=128)
    seen_at = models.DateTimeField()

    class Meta:
        db_table = "mcp_server_mcpnonce"
        constraints = [models.UniqueConstraint(fields=["token", "nonce"], name="mcp_nonce_unique_per_token")]


class MCPThrottleWindow(models.Model):
    """A fixed one-minute window's count for one throttle key, shared by every worker and host:
    calls of one tool by one caller ("tool:<tool>:<caller>"), failed authentications from one
    address ("auth:<address>"), failed admin logins from one address ("login:<address>")."""

    key = models.CharField(max_length=200)
    window_start = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "mcp_server_mcpthrottlewindow"
        constraints = [
            models.UniqueConstraint(fields=["key", "window_start"], name="mcp_throttle_window_unique"),
        ]


class OAuthClient(models.Model):
    """An OAuth client: registered dynamically (RFC 7591) or known by its client ID metadata document
    (a client_id that is an https URL, fetched and cached)."""

    client_id = models.CharField(max_length=2000, unique=True)
    name = models.CharField(max_length=200, blank=True)
    # The SDK's OAuthClientInformationFull as JSON. A confidential client's secret is kept as issued:
    # the SDK's token endpoint compares it (it is worth nothing without a user's consent and PKCE).
    information = models.JSONField(default=dict)
    from_metadata_document = models.BooleanField(default=False)
    fetched_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "mcp_server_oauthclient"
        ordering = ["-created_at"]
        verbose_name = "OAuth client"

    def __str__(self) -> str:
        return self.name or self.client_id


class OAuthGrant(models.Model):
    """One sign-in: a user's consent for a client to act with these scopes on these libraries.
    Its codes and tokens die with it (revoked in the admin, at /revoke, or on a reused code)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oauth_grants")
    client = models.ForeignKey(OAuthClient, on_delete=models.CASCADE, related_name="grants")
    scopes = models.JSONField(default=list)
    # Empty means every library, as for a token.
    libraries = models.ManyToManyField("library.Library", blank=True, related_name="+")
    # The RFC 8707 resource (this server's /mcp) its tokens are bound to.
    resource = models.CharField(max_length=2000)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "mcp_server_oauthgrant"
        ordering = ["-created_at"]
        verbose_name = "OAuth grant"

    def __str__(self) -> str:
        return f"{self.user} → {self.client}"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None


class OAuthCode(models.Model):
    """An authorization code (its digest), usable once before it expires."""

    digest = models.CharField(max_length=64, unique=True)
    grant = models.ForeignKey(OAuthGrant, on_delete=models.CASCADE, related_name="codes")
    code_challenge = models.CharField(max_length=128)
    redirect_uri = models.TextField()
    redirect_uri_provided_explicitly = models.BooleanField(default=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "mcp_server_oauthcode"


class OAuthToken(models.Model):
    """An access or refresh token (its digest) of a grant. Refreshing rotates both: the old pair is
    retired, and a retired refresh token presented again revokes the whole grant."""

    class Kind(models.TextChoices):
        ACCESS = "access", "Access"
        REFRESH = "refresh", "Refresh"

    digest = models.CharField(max_length=64, unique=True)
    grant = models.ForeignKey(OAuthGrant, on_delete=models.CASCADE, related_name="tokens")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    # The grant's scopes, or fewer when a refresh asked for fewer.
    scopes = models.JSONField(default=list)
    expires_at = models.DateTimeField()
    retired_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "mcp_server_oauthtoken"


class GrantWriteRefused(RuntimeError):
    """A library grant written other than through access.library_grants."""


_GRANTING: contextvars.ContextVar[bool] = contextvars.ContextVar("granting", default=False)


@contextlib.contextmanager
def granting() -> Iterator[None]:
    """The one door through which a grant is created or raised: library_grants.grant enters it,
    and every other write of a LibraryGrant row (save, update, bulk_create) is refused, so no
    code path can widen access except by someone granting it (tests/access/test_grant_writes.py)."""
    token = _GRANTING.set(True)
    try:
        yield
    finally:
        _GRANTING.reset(token)


def _require_granting() -> None:
    if not _GRANTING.get():
        raise GrantWriteRefused("library grants are written only by access.library_grants.grant")


class _GrantQuerySet(models.QuerySet["LibraryGrant"]):
    """Grants are written one at a time by `grant` (save), never in bulk."""

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise GrantWriteRefused("library grants are not updated in bulk: use library_grants.grant")

    def bulk_create(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise GrantWriteRefused("library grants are not created in bulk: use library_grants.grant")

    def bulk_update(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise GrantWriteRefused("library grants are not updated in bulk: use library_grants.grant")


class LibraryGrant(models.Model):
    """A role on one library, given to one user or to one Django group (never both). Taking one
    away (delete, cascades) is free; creating or raising one goes through `granting()`."""

    class Role(models.TextChoices):
        # In rising order: each role can do what the ones before it can.
        READER = "reader", "Reader (search, read, list)"
        EDITOR = "editor", "Editor (also add, change, delete and ingest)"
        MANAGER = "manager", "Manager (also grant roles on the library)"

    library = models.ForeignKey("library.Library", on_delete=models.CASCADE, related_name="grants")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="library_grants",
    )
    group = models.ForeignKey(
        "auth.Group", null=True, blank=True, on_delete=models.CASCADE, related_name="library_grants"
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    granted_by = models.CharField(max_length=150, blank=True, default="", editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = _GrantQuerySet.as_manager()

    def save(self, *args: Any, **kwargs: Any) -> None:
        _require_granting()
        super().save(*args, **kwargs)

    class Meta:
        db_table = "mcp_server_librarygrant"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(user__isnull=False, group__isnull=True)
                | models.Q(user__isnull=True, group__isnull=False),
                name="library_grant_user_or_group",
            ),
            models.UniqueConstraint(fields=["library", "user"], name="library_grant_one_per_user"),
            models.UniqueConstraint(fields=["library", "group"], name="library_grant_one_per_group"),
        ]
        ordering = ["library__name", "role"]

    def __str__(self) -> str:
        holder = f"user {self.user}" if self.user_id else f"group {self.group}"
        return f"{holder}: {self.role} on {self.library}"


class AccessPolicyState(models.Model):
    """The library access policy this database is under (one row; none: never chosen, `open`).

    Written only by an explicit, audited act (access/access_policy.py: `manage.py
    access_policy`, or a fresh database's first server start under an explicit LIBRARY_ACCESS),
    never by whichever process started last."""

    policy = models.CharField(max_length=16)
    changed_at = models.DateTimeField(auto_now=True)
    changed_by = models.CharField(max_length=150, blank=True, default="")

    class Meta:
        db_table = "mcp_server_accesspolicystate"


class OIDCIdentity(models.Model):
    """The person an OpenID Connect provider's (issuer, subject) signs in (single_sign_on.py)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oidc_identities"
    )
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "mcp_server_oidcidentity"
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="oidc_identity_unique")]
        verbose_name = "OIDC identity"
        verbose_name_plural = "OIDC identities"

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"


class SignInGroup(models.Model):
    """A Django group the identity provider's groups claim manages: each single sign-on adds or
    removes the person; groups made by hand are never touched."""

    group = models.OneToOneField("auth.Group", on_delete=models.CASCADE, related_name="sign_in")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return str(self.group)

    class Meta:
        db_table = "mcp_server_signingroup"
