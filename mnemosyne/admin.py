"""Admin for sources (here, not in library/admin.py: its "Sync now" queues an ingestion task, and the
library layer does not reach up into ingestion)."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from mnemosyne.ingestion.syncing import sync_once
from mnemosyne.library.models import Source


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = ["uid", "collection", "kind", "location", "every_minutes", "last_sync_at", "last_status",
                    "counts", "last_error"]  # fmt: skip
    list_filter = ["kind", "last_status"]
    search_fields = ["uid", "location", "last_error"]
    readonly_fields = ["uid", "last_sync_at", "last_status", "last_error", "last_counts", "last_commit",
                       "next_sync_at", "created_at"]  # fmt: skip
    exclude = ["manifest"]
    actions = ["sync_now"]

    @admin.display(description="last sync")
    def counts(self, source: Source) -> str:
        return ", ".join(f"{count} {what}" for what, count in (source.last_counts or {}).items() if count)

    @admin.action(description="Sync the selected sources now (a background worker runs it)")
    def sync_now(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        for source in queryset:
            sync_once.enqueue(source_uid=source.uid)
        self.message_user(request, f"Queued a sync of {queryset.count()} source(s).")
