"""MCP access tokens: only the SHA-256 digest of a token is stored."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone


class MCPToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mcp_tokens")
    name = models.CharField(max_length=100)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=16, editable=False, help_text="The token's first characters.")
    # Empty means every tool.
    allowed_tools = models.JSONField(default=list, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
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


class MCPAuditEvent(models.Model):
    class Kind(models.TextChoices):
        TOKEN_CREATED = "token_created", "Token created"
        TOKEN_REVOKED = "token_revoked", "Token revoked"

    kind = models.CharField(max_length=32, choices=Kind.choices)
    token = models.ForeignKey(MCPToken, null=True, on_delete=models.SET_NULL, related_name="audit_events")
    actor = models.CharField(max_length=150, help_text="Who did it: a username or 'system'.")
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "MCP audit event"

    def __str__(self) -> str:
        return f"{self.kind} by {self.actor}"
