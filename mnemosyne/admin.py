"""Admin for sources and items (here, not in library/admin.py: a source's "Sync now" and an item's
corrected identity queue ingestion tasks, and the library layer does not reach up into ingestion)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from mnemosyne.ingestion.identity_corrections import corrections
from mnemosyne.ingestion.tasks import correct_identity, enqueue_sync
from mnemosyne.library.models import Item, Source
from mnemosyne.library.services import delete_item
from mnemosyne.profiles.identity import InvalidIdentity, parse_given
from mnemosyne.storage import get_chunk_store

# The item's fields a person may correct, by the identity key each is.
IDENTITY_FIELDS = {
    "title": "title",
    "organisation": "organisation",
    "document_type": "doc_type",
    "document_date": "date",
    "period": "period",
}


class ItemForm(forms.ModelForm):
    class Meta:
        model = Item
        fields = "__all__"

    def clean_period(self) -> str:
        period = str(self.cleaned_data.get("period") or "")
        if period:
            try:
                parse_given({"period": period})
            except InvalidIdentity as exc:
                raise forms.ValidationError(str(exc)) from exc
        return period


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    form = ItemForm
    list_display = ["title", "collection", "organisation", "document_type", "period", "document_date",
                    "item_type", "chunk_count", "embedding_status", "updated_at"]  # fmt: skip
    list_filter = ["embedding_status", "item_type", "document_type", "collection__library"]
    search_fields = ["title", "uid", "source", "organisation"]
    readonly_fields = ["uid", "content_hash", "chunk_count", "created_at", "updated_at"]
    list_select_related = ["collection", "collection__library"]

    def save_model(self, request: HttpRequest, obj: Item, form: Any, change: bool) -> None:
        """An edit of what the document is is kept as given (a re-ingest keeps it) and its chunks'
        context rebuilt by a background worker; the other fields save as usual."""
        if not change:
            super().save_model(request, obj, form, change)
            return
        edited = {
            IDENTITY_FIELDS[name]: form.cleaned_data[name]
            for name in form.changed_data
            if name in IDENTITY_FIELDS
        }
        others = [name for name in form.changed_data if name not in IDENTITY_FIELDS]
        current = Item.objects.get(pk=obj.pk)
        if others:
            obj.save(update_fields=others)
        values = parse_given(
            {
                key: value.isoformat() if hasattr(value, "isoformat") else str(value or "")
                for key, value in edited.items()
            }
        )
        changed = corrections(values, current)
        if changed:
            correct_identity(current, changed)
            self.message_user(
                request,
                "What the document is was corrected; a background worker refreshes its chunks' context.",
            )

    # Deleting goes through the service, so stored objects and Neo4j mentions go too.
    def delete_model(self, request: HttpRequest, obj: Item) -> None:
        delete_item(item_uid=obj.uid, dry_run=False, store=get_chunk_store())

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Item]) -> None:
        for uid in list(queryset.values_list("uid", flat=True)):
            delete_item(item_uid=uid, dry_run=False, store=get_chunk_store())


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
            enqueue_sync(source)
        self.message_user(request, f"Queued a sync of {queryset.count()} source(s).")
