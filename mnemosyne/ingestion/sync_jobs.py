"""A sync of a source someone asked for (`sync_source`, the console's and the admin's "Sync now"),
run by a background worker as a job (library.models.IngestJob, kind `sync`): the same row the
console, `get_ingestion_status` and an MCP task show. While it runs, job_watch.py writes where it is
("read 3 of 12 changed files", "embedded 128 of 400 chunks") and watches for a cancel: the sync
then stops between two files (or two slices of chunks), keeps the documents it had finished, and
the job ends `cancelled`. When it ends, the job holds what it did (`counts`: created, updated,
unchanged, renamed, deleted, failed, skipped).
"""

from __future__ import annotations

import logging
from pathlib import PurePath

from mnemosyne.ingestion.job_watch import Watcher, claim, finish
from mnemosyne.ingestion.sync.listings import SourceUnavailable
from mnemosyne.ingestion.sync.runs import CANCELLED, sync_source
from mnemosyne.lib import cancellation, progress
from mnemosyne.library.models import IngestJob, Source

logger = logging.getLogger(__name__)


def source_name(source: Source) -> str:
    """The source as it is named outside the server: a path by its last part (server paths stay
    on the server), a website by its address."""
    if source.kind == Source.Kind.WEB:
        return source.location
    return PurePath(source.location).name or source.location


def run_sync(job_uid: str) -> dict[str, object]:
    """The sync_job task's body: claim the job, sync its source, record how it ended."""
    if not claim(IngestJob, job_uid, "listing the source", kind=IngestJob.Kind.SYNC):
        return {"job_id": job_uid, "skipped": "not queued"}
    job = IngestJob.objects.select_related("source__collection__library").get(uid=job_uid)
    if job.source is None:
        finish(
            job,
            IngestJob.Status.FAILED,
            error="the source was removed before it was synced",
            progress="failed",
        )
        return {"job_id": job_uid, "status": "failed"}
    token = cancellation.Token()
    watcher = Watcher(job, token)
    try:
        with cancellation.of(token), progress.to(watcher.report):
            report = sync_source(job.source)
    except cancellation.Cancelled:
        watcher.stop()
        finish(job, IngestJob.Status.CANCELLED, error=CANCELLED, progress="cancelled")
        return {"job_id": job_uid, "status": "cancelled"}
    except SourceUnavailable as exc:
        watcher.stop()
        error = str(exc).replace(job.source.location, source_name(job.source))
        finish(job, IngestJob.Status.FAILED, error=error, progress="failed")
        return {"job_id": job_uid, "status": "failed", "error": error}
    except Exception as exc:
        watcher.stop()
        logger.exception("sync job %s failed", job_uid)
        error = f"internal error ({type(exc).__name__}); see the server log"
        finish(job, IngestJob.Status.FAILED, error=error, progress="failed")
        raise
    watcher.stop()
    if report.busy:
        finish(job, IngestJob.Status.FAILED, error=report.busy, progress="failed")
        return {"job_id": job_uid, "status": "failed", "error": report.busy}
    counts = report.counts()
    errors = "; ".join(report.errors()[:20])
    finish(job, IngestJob.Status.COMPLETE, counts=counts, error=errors, progress="done")
    return {"job_id": job_uid, "status": "complete", **counts}
