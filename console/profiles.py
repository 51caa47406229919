"""A library's profile and synonym sets, kept by its managers (and staff): the profile changed,
with what that changes said and a re-read of its documents offered; a synonym set added or
replaced from the Solr / Elasticsearch format (each line that cannot be read reported, the rest
kept; a set refused whole changes nothing), exported, or deleted. Each is a POST with CSRF,
audited, and counts for the next search."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from access.principal import Principal
from console.access import audited, console_view, decide, may_manage
from mnemosyne.ingestion.tasks import reread_documents
from mnemosyne.library import selectors
from mnemosyne.library.models import Library
from mnemosyne.profiles.catalog import UnknownProfile
from mnemosyne.profiles.models import SynonymSet
from mnemosyne.profiles.services import change_profile, delete_synonym_set, save_synonym_set
from mnemosyne.profiles.synonyms import SynonymSetRefused

MAX_SHOWN_REFUSALS = 20


def _managed(request: HttpRequest, principal: Principal, uid: str) -> Library:
    decide(principal, library_uid=uid)
    library = selectors.get_library(uid)
    if not may_manage(request.user, library.pk):
        raise PermissionDenied("Only the library's managers change its profile and synonym sets.")
    return library


def _back(library: Library) -> HttpResponseRedirect:
    return HttpResponseRedirect(reverse("console:library", args=[library.uid]) + "#profile")


@require_POST
@console_view
def set_profile(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    library = _managed(request, principal, uid)
    try:
        change = change_profile(library=library, profile=request.POST.get("profile", "")[:40])
    except UnknownProfile as exc:
        messages.error(request, f"Not changed: {exc}.")
        return _back(library)
    audited(principal, "set_profile", change.after.name, library_uid=uid)
    for line in change.describe():
        messages.info(request, line)
    if request.POST.get("reread") == "on" and change.documents:
        reread_documents.enqueue(library_uid=library.uid)
        audited(principal, "reread_documents", "queued", library_uid=uid)
        messages.success(request, f"Queued a re-read of its {change.documents} documents.")
    return _back(library)


@require_POST
@console_view
def save_set(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    library = _managed(request, principal, uid)
    name = request.POST.get("name", "")[:200]
    try:
        saved = save_synonym_set(
            library=library, name=name, text=request.POST.get("text", ""), actor=principal.actor
        )
    except SynonymSetRefused as exc:
        messages.error(request, f"Refused, nothing changed: {exc}.")
        return _back(library)
    audited(
        principal, "save_synonym_set", "created" if saved.created else "replaced", library_uid=uid, name=name
    )
    lines = saved.describe()
    messages.success(request, lines[0])
    for line in lines[1 : 1 + MAX_SHOWN_REFUSALS]:
        messages.warning(request, line)
    if len(lines) > 1 + MAX_SHOWN_REFUSALS:
        messages.warning(request, f"… and {len(lines) - 1 - MAX_SHOWN_REFUSALS} more lines refused.")
    return _back(library)


@require_POST
@console_view
def delete_set(request: HttpRequest, principal: Principal, uid: str, name: str) -> HttpResponse:
    library = _managed(request, principal, uid)
    if delete_synonym_set(library=library, name=name):
        audited(principal, "delete_synonym_set", "ok", library_uid=uid, name=name)
        messages.success(request, f"Deleted the synonym set “{name}”.")
    else:
        messages.error(request, f"There is no synonym set “{name[:64]}”.")
    return _back(library)


@console_view
def export_set(request: HttpRequest, principal: Principal, uid: str, name: str) -> HttpResponse:
    decide(principal, library_uid=uid)
    library = selectors.get_library(uid)
    found = SynonymSet.objects.filter(library=library, name=name).first()
    if found is None:
        raise Http404("no such synonym set")
    response = HttpResponse(found.text, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{found.pk}-synonyms.txt"'
    return response
