"""Admin for MCP tokens: a new token is shown once on the page after creation, never stored raw."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from mcp_server.auth import library_access
from mcp_server.auth.library_access import Role, credential_problem
from mcp_server.auth.library_grants import grant, revoke
from mcp_server.auth.oauth import admin as _oauth_admin  # noqa: F401  (registers the OAuth models)
from mcp_server.auth.services import create_token, decide_approval, extend_token, revoke_token
from mcp_server.auth.sign_in_audit import address_of
from mcp_server.models import SCOPES, LibraryGrant, MCPApprovalRequest, MCPAuditEvent, MCPToken, OIDCIdentity
from mcp_server.tools.catalog import TOOL_SPECS

EXTENSION_DAYS = 30
# The admin's sign-in page offers single sign-on, and hides the password form when passwords are off.
admin.site.login_template = "admin/sign_in.html"

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
        return TemplateResponse(request, "admin/mcp_server/token_created.html", context)

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


@admin.register(MCPAuditEvent)
class MCPAuditEventAdmin(admin.ModelAdmin):
    list_display = ["created_at", "kind", "actor", "address", "token"]
    list_filter = ["kind"]
    search_fields = ["actor", "address"]
    readonly_fields = ["created_at", "kind", "actor", "address", "token", "detail"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(MCPApprovalRequest)
class MCPApprovalRequestAdmin(admin.ModelAdmin):
    list_display = ["created_at", "uid", "tool", "token", "subject", "status", "decided_by"]
    list_filter = ["status", "tool"]
    readonly_fields = [
        "uid",
        "token",
        "subject",
        "tool",
        "arguments_preview",
        "arguments_digest",
        "status",
        "decided_by",
        "decided_at",
        "created_at",
    ]
    actions = ["approve_selected", "reject_selected"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Approve selected requests (each may then be used once)")
    def approve_selected(self, request: HttpRequest, queryset: QuerySet[MCPApprovalRequest]) -> None:
        for pending in queryset:
            decide_approval(request=pending, approve=True, actor=request.user.get_username())
        self.message_user(request, "Approved the pending request(s).", messages.SUCCESS)

    @admin.action(description="Reject selected requests")
    def reject_selected(self, request: HttpRequest, queryset: QuerySet[MCPApprovalRequest]) -> None:
        for pending in queryset:
            decide_approval(request=pending, approve=False, actor=request.user.get_username())
        self.message_user(request, "Rejected the pending request(s).", messages.SUCCESS)


@admin.register(LibraryGrant)
class LibraryGrantAdmin(admin.ModelAdmin):
    """Roles on libraries. Superusers manage every grant; a library's managers manage its grants.
    Every change goes through library_grants (an audit row each) and counts from the next request."""

    list_display = ["library", "user", "group", "role", "granted_by", "updated_at"]
    list_filter = ["role", "library"]
    search_fields = ["library__name", "user__username", "group__name"]
    fields = ["library", "user", "group", "role"]

    def _managed(self, request: HttpRequest) -> frozenset[int] | None:
        return library_access.reach_of(request.user).managed

    def get_queryset(self, request: HttpRequest) -> QuerySet[LibraryGrant]:
        rows = super().get_queryset(request).select_related("library", "user", "group")
        managed = self._managed(request)
        return rows if managed is None else rows.filter(library_id__in=managed)

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        managed = self._managed(request)
        if db_field.name == "library" and managed is not None:
            kwargs["queryset"] = db_field.remote_field.model.objects.filter(pk__in=managed)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def _may_manage(self, request: HttpRequest, obj: LibraryGrant | None = None) -> bool:
        managed = self._managed(request)
        if managed is None:
            return True
        return bool(managed) if obj is None else obj.library_id in managed

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._may_manage(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may_manage(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self._may_manage(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may_manage(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may_manage(request, obj)

    def save_model(self, request: HttpRequest, obj: LibraryGrant, form: Any, change: bool) -> None:
        if change:
            before = LibraryGrant.objects.get(pk=obj.pk)
            if (before.library_id, before.user_id, before.group_id) != (
                obj.library_id,
                obj.user_id,
                obj.group_id,
            ):
                # The grant moved to another holder or library: the old one is taken back first.
                self.delete_model(request, before)
        grant(
            library=obj.library,
            role=Role.named(obj.role),
            user=obj.user,
            group=obj.group,
            actor=request.user.get_username(),
            address=address_of(request),
        )
        saved = LibraryGrant.objects.get(library=obj.library, user=obj.user, group=obj.group)
        obj.pk = saved.pk

    def delete_model(self, request: HttpRequest, obj: LibraryGrant) -> None:
        revoke(
            library=obj.library,
            user=obj.user,
            group=obj.group,
            actor=request.user.get_username(),
            address=address_of(request),
        )

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[LibraryGrant]) -> None:
        for row in queryset:
            self.delete_model(request, row)


@admin.register(OIDCIdentity)
class OIDCIdentityAdmin(admin.ModelAdmin):
    """Who an OpenID Connect sign-in is: add a row to link a provider's person to an existing account."""

    list_display = ["user", "issuer", "subject", "created_at"]
    search_fields = ["user__username", "subject"]
