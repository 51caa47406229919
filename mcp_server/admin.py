"""Admin for MCP tokens: a new token is shown once on the page after creation, never stored raw."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from mcp_server.models import MCPAuditEvent, MCPToken
from mcp_server.server import TOOL_SPECS
from mcp_server.services import create_token, revoke_token

RAW_TOKEN_ATTRIBUTE = "_mcp_raw_token"


class TokenCreationForm(forms.ModelForm):
    allowed_tools = forms.MultipleChoiceField(
        choices=[(spec.name, spec.name) for spec in TOOL_SPECS],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Leave empty to allow every tool.",
    )

    class Meta:
        model = MCPToken
        fields = ["user", "name", "allowed_tools", "expires_at"]


@admin.register(MCPToken)
class MCPTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "prefix", "created_at", "expires_at", "revoked_at", "last_used_at"]
    list_filter = ["revoked_at"]
    search_fields = ["name", "prefix", "user__username"]
    readonly_fields = ["prefix", "allowed_tools", "created_at", "last_used_at", "revoked_at"]
    fields = [
        "user",
        "name",
        "prefix",
        "allowed_tools",
        "expires_at",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    actions = ["revoke_selected"]

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = TokenCreationForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ["user", "name", "allowed_tools", "expires_at"] if obj is None else self.fields

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return [] if obj is None else [*self.readonly_fields, "user", "name"]

    def save_model(self, request: HttpRequest, obj: MCPToken, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        token, raw = create_token(
            user=form.cleaned_data["user"],
            name=form.cleaned_data["name"],
            allowed_tools=form.cleaned_data["allowed_tools"],
            expires_at=form.cleaned_data["expires_at"],
            actor=request.user.get_username(),
        )
        obj.pk = token.pk
        # Kept on the request only, for the page rendered right after.
        setattr(request, RAW_TOKEN_ATTRIBUTE, raw)

    def response_add(
        self, request: HttpRequest, obj: MCPToken, post_url_continue: str | None = None
    ) -> HttpResponse:
        token = MCPToken.objects.get(pk=obj.pk)
        context = {
            **self.admin_site.each_context(request),
            "token": token,
            "raw_token": getattr(request, RAW_TOKEN_ATTRIBUTE),
        }
        return TemplateResponse(request, "admin/mcp_server/token_created.html", context)

    @admin.action(description="Revoke selected tokens")
    def revoke_selected(self, request: HttpRequest, queryset: QuerySet[MCPToken]) -> None:
        for token in queryset:
            revoke_token(token=token, actor=request.user.get_username())
        self.message_user(request, f"Revoked {queryset.count()} token(s).", messages.SUCCESS)


@admin.register(MCPAuditEvent)
class MCPAuditEventAdmin(admin.ModelAdmin):
    list_display = ["created_at", "kind", "actor", "token"]
    list_filter = ["kind"]
    readonly_fields = ["created_at", "kind", "actor", "token", "detail"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
