"""Files an editor drops on a collection: each one checked (type by its name, size, how many at
once), kept as an upload job and read by the background worker, as `upsert_item` does with a large
document; the page shows the upload's progress, then polls the jobs until each is read or says why
it failed. The same file name uploaded again replaces its item."""

from __future__ import annotations

from pathlib import PurePath

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from access.principal import Principal
from console.access import audited, console_view, decide, decide_change
from mnemosyne.ingestion import formats
from mnemosyne.ingestion.tasks import enqueue_upload
from mnemosyne.library import selectors
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import IngestJob

# Files in one upload.
MAX_FILES = 20
# Jobs shown under the upload form, newest first.
JOBS_SHOWN = 20
_WORKING = (IngestJob.Status.QUEUED, IngestJob.Status.RUNNING)


@require_POST
@console_view
def upload(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    decide_change(principal, collection_uid=uid)
    collection = selectors.get_collection(uid)
    files = request.FILES.getlist("files")
    # Each file's refusal, in the order the files came (one skipped for its size never reaches FILES).
    refusals: list[tuple[str, str]] = [
        (name, f"{PurePath(name).name}: over the limit of {settings.INGEST_MAX_FILE_BYTES:,} bytes.")
        for name in getattr(request, "too_large_uploads", [])
    ]
    if not files and not refusals:
        refusals.append(("", "Choose or drop at least one file."))
    elif len(files) > MAX_FILES:
        refusals.append(("", f"{len(files)} files at once is more than {MAX_FILES}; upload them in parts."))
        files = []
    for upload in files:
        name = PurePath(upload.name or "").name
        found = formats.by_filename(name)
        if found is None:
            refusals.append(
                (upload.name or "", f"{name}: not a type Mnemosyne reads ({', '.join(_suffixes())}).")
            )
            continue
        if upload.size is not None and upload.size > settings.INGEST_MAX_FILE_BYTES:
            refusals.append(
                (
                    upload.name or "",
                    f"{name}: {upload.size:,} bytes, over the limit of {settings.INGEST_MAX_FILE_BYTES:,}.",
                )
            )
            continue
        try:
            enqueue_upload(
                collection=collection,
                title=PurePath(name).stem or name,
                content=upload.read(),
                mime_type=found.mime_types[0],
                external_id=f"upload:{name}",
                metadata={"file_name": name, "uploaded_by": request.user.get_username()},
            )
        except InvalidArgument as exc:
            refusals.append((upload.name or "", f"{name}: {exc}."))
        else:
            audited(principal, "upsert_item", "queued", collection_uid=uid, content=name)
    arrived = getattr(request, "arrived_uploads", [])
    refusals.sort(key=lambda pair: arrived.index(pair[0]) if pair[0] in arrived else len(arrived))
    refused = [said for _, said in refusals]
    # The refusals are part of the answer (shown above the jobs), so it is a 200 htmx swaps in.
    return _jobs_page(request, collection.uid, refused)


@console_view
def jobs(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    """The collection's recent upload jobs (polled while any is queued or being read)."""
    decide(principal, collection_uid=uid)
    return _jobs_page(request, uid, [])


def _jobs_page(request: HttpRequest, uid: str, refused: list[str]) -> HttpResponse:
    recent = list(
        IngestJob.objects.filter(collection__uid=uid)
        .select_related("item")
        .defer("content")
        .order_by("-created_at")[:JOBS_SHOWN]
    )
    return render(
        request,
        "console/upload_jobs.html",
        {
            "uid": uid,
            "jobs": recent,
            "refused": refused,
            "working": any(job.status in _WORKING for job in recent),
        },
    )


def _suffixes() -> list[str]:
    return sorted({suffix for entry in formats.FORMATS for suffix in entry.suffixes})
