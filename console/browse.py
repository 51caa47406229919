"""Libraries → collections → items → an item's chunks, with what a person asks first: how many,
in what state (and why a failed item failed), what each item is and where it came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Q, QuerySet, Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from access.principal import Principal
from access.refusals import WRITE
from console import item_text as text_view
from console.access import console_view, decide, may_manage
from console.chunk_flags import flags_of
from mnemosyne.ingestion.status import counts_by_status
from mnemosyne.library import selectors
from mnemosyne.library.models import Chunk, EmbeddingStatus, IngestJob, Item, Library
from mnemosyne.profiles.catalog import PROFILES, profile_of
from mnemosyne.profiles.models import SynonymSet
from mnemosyne.profiles.rules_listing import rule_lines

# Items on one page of a collection; the next page starts after the last one's (title, id).
ITEMS_PER_PAGE = 50
# Chunks listed on an item's page (the rest: "more").
CHUNKS_PER_PAGE = 500
STATUSES = [status.value for status in EmbeddingStatus]


@console_view
def libraries(request: HttpRequest, principal: Principal) -> HttpResponse:
    found = list(selectors.libraries())
    totals: dict[int, dict[str, Any]] = {
        row["collection__library_id"]: dict(row)
        for row in Item.objects.filter(collection__library__in=found)
        .values("collection__library_id")
        .annotate(
            item_count=Count("id"),
            chunk_total=Sum("chunk_count"),
            failed=Count("id", filter=Q(embedding_status=EmbeddingStatus.FAILED)),
            processing=Count(
                "id", filter=Q(embedding_status__in=[EmbeddingStatus.PENDING, EmbeddingStatus.PROCESSING])
            ),
        )
    }
    rows: list[tuple[Library, dict[str, Any]]] = [(library, totals.get(library.pk, {})) for library in found]
    return render(request, "console/libraries.html", {"rows": rows})


@console_view
def library(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    decide(principal, library_uid=uid)
    found = selectors.get_library(uid)
    collections = (
        found.collections.order_by("name")
        .annotate(
            item_count=Count("items"),
            chunks=Sum("items__chunk_count"),
            failed=Count("items", filter=Q(items__embedding_status=EmbeddingStatus.FAILED)),
        )
        .select_related("library")
    )
    return render(
        request,
        "console/library.html",
        {
            "library": found,
            "collections": collections,
            "profile": profile_of(found.library_type),
            "profiles": list(PROFILES.values()),
            "rules": rule_lines(found),
            "synonym_sets": SynonymSet.objects.filter(library=found).order_by("name"),
            "may_manage": may_manage(request.user, found.pk),
        },
    )


@dataclass(frozen=True)
class ItemPage:
    items: list[Item]
    next_after: str  # "" on the last page


def item_page(queryset: QuerySet[Item], *, after: str, limit: int = ITEMS_PER_PAGE) -> ItemPage:
    """One page of items in (title, id) order, after the item whose id is `after` (keyset paging:
    as fast on the 2,000th page as on the first)."""
    queryset = queryset.order_by("title", "id")
    if after.isdigit() and len(after) <= 18:  # an id; anything else starts at the top
        last = Item.objects.filter(pk=int(after)).values_list("title", "id").first()
        if last is not None:
            queryset = queryset.filter(Q(title__gt=last[0]) | Q(title=last[0], id__gt=last[1]))
    found = list(queryset[: limit + 1])
    more = len(found) > limit
    return ItemPage(found[:limit], str(found[limit - 1].pk) if more else "")


@console_view
def collection(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    decide(principal, collection_uid=uid)
    found = selectors.get_collection(uid)
    query = request.GET.get("q", "").strip()[:200]
    status = request.GET.get("status", "")
    queryset = Item.objects.filter(collection=found).select_related("origin")
    if query:
        queryset = queryset.filter(title__icontains=query)
    if status in STATUSES:
        queryset = queryset.filter(embedding_status=status)
    page = item_page(queryset, after=request.GET.get("after", ""))
    counts = _status_counts(found.pk)
    context: dict[str, Any] = {
        "collection": found,
        "library": found.library,
        "page": page,
        "query": query,
        "status": status if status in STATUSES else "",
        "statuses": STATUSES,
        "sources": found.sources.order_by("created_at"),
        "may_change": may_change(principal, found.library_id),
        "counts": counts,
    }
    if getattr(request, "htmx", False):
        return render(request, "console/item_rows.html", context)
    recent = list(
        IngestJob.objects.filter(collection=found)
        .select_related("item")
        .defer("content")
        .order_by("-created_at")[:20]
    )
    context |= {
        "jobs": recent,
        "working": any(job.status in (IngestJob.Status.QUEUED, IngestJob.Status.RUNNING) for job in recent),
        "counts_failed": dict(counts).get(EmbeddingStatus.FAILED, 0),
    }
    return render(request, "console/collection.html", context)


def may_change(principal: Principal, library_id: int) -> bool:
    """Whether to offer this person the library's changes (the decision checks each one again)."""
    return principal.has_scope(WRITE) and principal.may_change(library_id)


def _status_counts(collection_id: int) -> list[tuple[str, int]]:
    return list(counts_by_status(Item.objects.filter(collection_id=collection_id)).items())


@console_view
def item(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    decide(principal, item_uid=uid)
    found = selectors.get_item(uid)
    chunks = list(
        Chunk.objects.filter(item=found)
        .order_by("ordinal")
        .defer("embedding", "search_vector")[:CHUNKS_PER_PAGE]
    )
    for chunk in chunks:
        chunk.characters = chunk.char_end - chunk.char_start  # type: ignore[attr-defined]
    rows = [(chunk, flags_of(chunk)) for chunk in chunks]
    return render(
        request,
        "console/item.html",
        {
            "item": found,
            "collection": found.collection,
            "library": found.collection.library,
            "rows": rows,
            "flagged": sum(1 for _, flags in rows if flags),
            "more": found.chunk_count > len(chunks),
            "may_change": may_change(principal, found.collection.library_id),
            "identity": [
                (label, value)
                for label, value in (
                    ("Organisation", found.organisation),
                    ("Kind", found.document_type),
                    ("Date", found.document_date.isoformat() if found.document_date else ""),
                    ("Period", found.period),
                )
                if value
            ],
        },
    )


@console_view
def item_text(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    """The chunk inspector's text view: the item's normalised text with its chunk boundaries drawn,
    a page of chunks at a time (from ordinal `from`)."""
    decide(principal, item_uid=uid)
    found = selectors.get_item(uid)
    start = request.GET.get("from", "0")
    first = int(start) if start.isdigit() and len(start) <= 9 else 0
    chunks = list(
        Chunk.objects.filter(item=found, ordinal__gte=first)
        .order_by("ordinal")
        .defer("embedding", "search_vector")[: text_view.CHUNKS_PER_PAGE + 1]
    )
    shown = chunks[: text_view.CHUNKS_PER_PAGE]
    return render(
        request,
        "console/item_text.html",
        {
            "item": found,
            "collection": found.collection,
            "library": found.collection.library,
            "pieces": [(piece, flags_of(piece.chunk)) for piece in text_view.pieces(shown)],
            "next_from": chunks[-1].ordinal if len(chunks) > len(shown) else None,
            "first": first,
        },
    )
