"""What an editor changes from the console: delete an item (after a confirmation that shows what
goes: delete_item's dry run), read a collection's failed items again in one action, sync a source
now. Each is decided by the one place that decides as a write of the library it touches (the
`delete_item` and `upsert_item` tools' rules: under grants, editors only), is a POST with CSRF,
and queues long work for the background worker, as `upsert_item` does."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from access.principal import Principal
from console.access import audited, console_view, decide_change
from mnemosyne.ingestion.inputs import is_url
from mnemosyne.ingestion.sync.adding import kind_of, new_source
from mnemosyne.ingestion.tasks import enqueue_sync, ingest_source, schedule_next
from mnemosyne.library import selectors, services
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import EmbeddingStatus, Item, Source
from mnemosyne.storage import get_chunk_store

# A typed confirmation: the form sends exactly this, nothing else deletes.
CONFIRM_DELETE = "delete"


@console_view
def delete_item(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    decide_change(principal, item_uid=uid)
    if request.method == "POST" and request.POST.get("confirm") == CONFIRM_DELETE:
        report = services.delete_item(item_uid=uid, dry_run=False, store=get_chunk_store())
        audited(principal, "delete_item", "ok", item_uid=uid, dry_run=False)
        collection = report.item.collection
        messages.success(request, f"Deleted “{report.item.title}” and its {report.chunk_count} chunks.")
        if not report.storage_cleaned:
            messages.warning(
                request, "Its stored text could not be removed from the chunk store; see the server log."
            )
        return HttpResponseRedirect(reverse("console:collection", args=[collection.uid]))
    report = services.delete_item(item_uid=uid, dry_run=True, store=get_chunk_store())
    item = report.item
    return render(
        request,
        "console/delete_item.html",
        {
            "item": item,
            "collection": item.collection,
            "library": item.collection.library,
            "report": report,
            "confirm": CONFIRM_DELETE,
        },
    )


@dataclass(frozen=True)
class Retry:
    item: Item
    queued: bool
    reason: str = ""


@require_POST
@console_view
def retry_failed(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    """Queue every failed item of the collection to be read again from where it came from."""
    decide_change(principal, collection_uid=uid)
    collection = selectors.get_collection(uid)
    failed = list(Item.objects.filter(collection=collection, embedding_status=EmbeddingStatus.FAILED))
    retries = [_retry(item) for item in failed]
    queued = sum(retry.queued for retry in retries)
    audited(principal, "retry_failed", f"queued {queued} of {len(failed)}", collection_uid=uid)
    if not failed:
        messages.info(request, "No item of this collection has failed.")
    else:
        messages.success(request, f"Queued {queued} of {len(failed)} failed items to be read again.")
    for retry in retries:
        if not retry.queued:
            messages.warning(request, f"“{retry.item.title}” cannot be read again from here: {retry.reason}.")
    return HttpResponseRedirect(reverse("console:collection", args=[collection.uid]))


def _retry(item: Item) -> Retry:
    if item.origin_id is not None:
        enqueue_sync(item.origin)  # type: ignore[arg-type]
        return Retry(item, True)
    if is_url(item.source):
        ingest_source.enqueue(collection_id=item.collection_id, location=item.source, source=item.source)
        return Retry(item, True)
    path = item.metadata.get("path") if isinstance(item.metadata, dict) else None
    if isinstance(path, str) and Path(path).is_file():
        ingest_source.enqueue(
            collection_id=item.collection_id, location=str(Path(path).resolve()), source=item.source
        )
        return Retry(item, True)
    if item.source.startswith(("external:", "content:")):
        return Retry(item, False, "it was uploaded; upload it again")
    return Retry(item, False, "its file is no longer where it was read from")


@require_POST
@console_view
def sync_now(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    """Queue a sync of one of the collection's sources (the admin's "Sync now")."""
    source = selectors.get_source(uid)
    decide_change(principal, collection_uid=source.collection.uid)
    enqueue_sync(source)
    audited(principal, "sync_now", "queued", source_uid=uid)
    messages.success(request, f"Queued a sync of {source.location}.")
    return HttpResponseRedirect(reverse("console:collection", args=[source.collection.uid]))


@require_POST
@console_view
def add_source(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    """Attach a source to the collection and queue its first sync. A website is any editor's to
    add; a directory, a git working tree or an S3 prefix reads what this server may read, so only
    staff add those."""
    decide_change(principal, collection_uid=uid)
    collection = selectors.get_collection(uid)
    location = request.POST.get("location", "").strip()[:2000]
    every = request.POST.get("every", "").strip()
    user = request.user
    if not location:
        messages.error(
            request, "Give the source's location: a website's address, or for staff a path or s3://…"
        )
    elif kind_of(location) != Source.Kind.WEB and not (user.is_staff or user.is_superuser):
        messages.error(
            request, "Only staff may add a directory, a git working tree or an S3 prefix; a website you may."
        )
    elif every and not (every.isdigit() and len(every) <= 6):
        messages.error(request, "Sync every: a whole number of minutes, or empty for no schedule.")
    else:
        try:
            source = new_source(
                collection,
                location,
                git=request.POST.get("git") == "on",
                include=_patterns(request.POST.get("include", "")),
                exclude=_patterns(request.POST.get("exclude", "")),
                every_minutes=int(every) if every else None,
            )
        except InvalidArgument as exc:
            messages.error(request, f"Not added: {exc}.")
        else:
            enqueue_sync(source)
            if source.every_minutes:
                schedule_next(source)
            audited(principal, "add_source", "queued", collection_uid=uid, location=location)
            messages.success(request, f"Added {source.location}; its first sync is queued.")
    return HttpResponseRedirect(reverse("console:collection", args=[collection.uid]))


def _patterns(text: str) -> list[str]:
    """gitignore-style patterns, one a line (at most 50 of 200 characters)."""
    return [line.strip()[:200] for line in text.splitlines() if line.strip()][:50]
