"""Admin for MCP tokens: a new token is shown once on the page after creation, never stored raw."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from access.library_access import credential_problem
from access.models import SCOPES, MCPToken
from access.services import create_token, extend_token, revoke_token
from access.sign_in_audit import address_of
from mcp_server.tools.catalog import TOOL_SPECS

EXTENSION_DAYS = 30

RAW_TOKEN_ATTRIBUTE = "_mcp_raw_token"


class TokenCreationForm(forms.ModelForm):
    allowed_tools = forms.MultipleChoiceField(
        choices=[(spec.name, spec.name) for spec in TOOL_SPECS],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Leave empty to allow every tool.",
    )
    scopes = forms.MultipleChoiceField(
        choices=[(scope, scope) for scope in SCOPES],
        initial=["read"],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="read for the reading tools and resources, write for upsert_item and delete_item; "
        "none ticked means read only.",
    )

    class Meta:
        model = MCPToken
        fields = [
            "user",
            "name",
            "scopes",
            "allowed_tools",
            "libraries",
            "rate_limit_per_minute",
            "sign_results",
            "expires_at",
        ]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        user = cleaned.get("user")
        if user is not None:
            libraries = cleaned.get("libraries")
            asked = frozenset(library.pk for library in libraries) if libraries else None
            problem = credential_problem(user, cleaned.get("scopes") or ["read"], asked)
            if problem is not None:
                raise forms.ValidationError(problem)
        return cleaned


@admin.register(MCPToken)
class MCPTokenAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "user",
        "prefix",
        "scopes",
        "created_at",
        "expires_at",
        "revoked_at",
        "last_used_at",
    ]
    list_filter = ["revoked_at"]
    search_fields = ["name", "prefix", "user__username"]
    readonly_fields = [
        "prefix",
        "scopes",
        "allowed_tools",
        "libraries",
        "rate_limit_per_minute",
        "sign_results",
        "created_by",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    fields = [
        "user",
        "name",
        "prefix",
        "scopes",
        "allowed_tools",
        "libraries",
        "rate_limit_per_minute",
        "sign_results",
        "expires_at",
        "created_by",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    actions = ["revoke_selected", "extend_selected"]

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = TokenCreationForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return [
                "user",
                "name",
                "scopes",
                "allowed_tools",
                "libraries",
                "rate_limit_per_minute",
                "sign_results",
                "expires_at",
            ]
        return self.fields

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
            scopes=form.cleaned_data["scopes"] or ["read"],
            libraries=list(form.cleaned_data["libraries"]),
            rate_limit_per_minute=form.cleaned_data["rate_limit_per_minute"],
            sign_results=form.cleaned_data["sign_results"],
            actor=request.user.get_username(),
            address=address_of(request),
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
        return TemplateResponse(request, "admin/access/token_created.html", context)

    @admin.action(description="Revoke selected tokens")
    def revoke_selected(self, request: HttpRequest, queryset: QuerySet[MCPToken]) -> None:
        for token in queryset:
            revoke_token(token=token, actor=request.user.get_username(), address=address_of(request))
        self.message_user(request, f"Revoked {queryset.count()} token(s).", messages.SUCCESS)

    @admin.action(description=f"Extend selected tokens by {EXTENSION_DAYS} days")
    def extend_selected(self, request: HttpRequest, queryset: QuerySet[MCPToken]) -> None:
        for token in queryset:
            extend_token(token=token, days=EXTENSION_DAYS, actor=request.user.get_username())
        self.message_user(request, f"Extended {queryset.count()} token(s).", messages.SUCCESS)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        # A new token's libraries are set by create_token; the form's save_m2m would need the raw pk.
        if change:
            super().save_related(request, form, formsets, change)
