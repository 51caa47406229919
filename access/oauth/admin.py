"""Admin for OAuth sign-ins: the grants users gave clients (revocable: every token of a revoked grant
stops working at its next request) and the clients that asked for them."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from access.models import OAuthClient, OAuthGrant


@admin.register(OAuthGrant)
class OAuthGrantAdmin(admin.ModelAdmin):
    list_display = ["user", "client", "scopes", "library_names", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at", "client"]
    search_fields = ["user__username", "client__name", "client__client_id"]
    readonly_fields = ["user", "client", "scopes", "libraries", "resource", "created_at", "last_used_at"]
    fields = [*readonly_fields, "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="libraries")
    def library_names(self, grant: OAuthGrant) -> str:
        return ", ".join(library.name for library in grant.libraries.all()) or "every library"

    @admin.action(description="Revoke the selected grants (their tokens stop working)")
    def revoke(self, request: HttpRequest, queryset: QuerySet[OAuthGrant]) -> None:
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {count} grant(s).", messages.SUCCESS)


@admin.register(OAuthClient)
class OAuthClientAdmin(admin.ModelAdmin):
    list_display = ["__str__", "client_id", "from_metadata_document", "created_at"]
    search_fields = ["name", "client_id"]
    readonly_fields = [
        "client_id",
        "name",
        "from_metadata_document",
        "fetched_at",
        "created_at",
        "redirect_uris",
    ]
    fields = [*readonly_fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="redirect URIs")
    def redirect_uris(self, client: OAuthClient) -> str:
        return "\n".join(client.information.get("redirect_uris", []))
