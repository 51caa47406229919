"""Admin for access: the audit trail, approvals, library grants and single sign-on identities (MCP
tokens' pages are mcp_server/admin.py's, beside the tool catalogue they choose from; OAuth's are
oauth/admin.py's). The admin's sign-in page offers single sign-on, and hides the password form when
passwords are off."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from access import library_access
from access.library_access import Role
from access.library_grants import grant, revoke
from access.models import LibraryGrant, MCPApprovalRequest, MCPAuditEvent, OIDCIdentity
from access.oauth import admin as _oauth_admin  # noqa: F401  (registers the OAuth models)
from access.services import decide_approval
from access.sign_in_audit import address_of

admin.site.login_template = "admin/sign_in.html"


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
