from django.contrib import admin
from django.http import HttpRequest

from mnemosyne.library.models import Chunk, Collection, IngestJob, Library, ReembedJob


@admin.register(Library)
class LibraryAdmin(admin.ModelAdmin):
    list_display = ["name", "library_type", "language", "uid", "created_at"]
    list_filter = ["library_type", "language"]
    search_fields = ["name", "uid", "description"]
    readonly_fields = ["uid", "created_at", "updated_at"]

    def get_readonly_fields(self, request: HttpRequest, obj: Library | None = None) -> list[str]:
        # A library's chunks are indexed in its language: change it with `ingest --language`,
        # which re-indexes them.
        return [*self.readonly_fields, "language"] if obj is not None else list(self.readonly_fields)


@admin.register(Collection)
class CollectionAdmin(admin.ModelAdmin):
    list_display = ["name", "library", "uid", "created_at"]
    list_filter = ["library"]
    search_fields = ["name", "uid"]
    readonly_fields = ["uid", "created_at", "updated_at"]
    list_select_related = ["library"]


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin):
    list_display = ["uid", "item", "ordinal", "section_path", "page", "token_count"]
    search_fields = ["uid", "text_preview", "item__title"]
    list_filter = ["library"]
    # The vector and tsvector are not for human eyes (and would be slow to render).
    exclude = ["embedding", "search_vector"]
    readonly_fields = [
        "uid",
        "item",
        "collection",
        "library",
        "ordinal",
        "text_preview",
        "section_path",
        "page",
        "char_start",
        "char_end",
        "token_count",
        "storage_key",
    ]
    list_select_related = ["item"]

    def has_add_permission(self, request: object) -> bool:
        return False


@admin.register(IngestJob)
class IngestJobAdmin(admin.ModelAdmin):
    list_display = [
        "uid",
        "kind",
        "title",
        "collection",
        "status",
        "size",
        "created_at",
        "finished_at",
        "error",
    ]
    list_filter = ["kind", "status"]
    search_fields = ["uid", "title", "error"]
    readonly_fields = [field.name for field in IngestJob._meta.fields if field.name != "content"]
    exclude = ["content"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(ReembedJob)
class ReembedJobAdmin(admin.ModelAdmin):
    """Re-embeddings asked for over MCP (`reembed_library`): read-only, as the workers record them."""

    list_display = [
        "uid",
        "library",
        "model_before",
        "model",
        "status",
        "progress",
        "created_at",
        "finished_at",
    ]
    list_filter = ["status"]
    search_fields = ["uid", "library__name", "error"]
    readonly_fields = [field.name for field in ReembedJob._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
