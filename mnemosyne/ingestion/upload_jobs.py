"""Uploads ingested in the background (`upsert_item` of a large document, or when asked): the
upload is kept in an IngestJob row and a task is queued in the same transaction
(tasks.enqueue_upload); a `db_worker`
(started by `serve` beside the web server, or run on its own) ingests it and records the outcome
— the item, or the reason it failed. A job that no worker picks up says so in its status.

While it runs, job_watch.py writes its progress and watches for a cancel: the pipeline then stops
between two slices of chunks, a new item is removed again (as after a failure), and the job ends
`cancelled`."""

from __future__ import annotations

import logging

from mnemosyne.embedding import get_embedder
from mnemosyne.ingestion import uploads
from mnemosyne.ingestion.job_watch import CANCELLED_ERROR, Watcher, claim, finish
from mnemosyne.lib import cancellation, progress
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import IngestJob
from mnemosyne.storage import get_chunk_store

logger = logging.getLogger(__name__)


def run_upload(job_uid: str) -> dict[str, object]:
    """The ingest_upload task's body: claim the job, ingest it, record how it ended."""
    if not claim(IngestJob, job_uid, "reading the document"):
        return {"job_id": job_uid, "skipped": "not queued"}
    job = IngestJob.objects.select_related("collection").get(uid=job_uid)
    token = cancellation.Token()
    watcher = Watcher(job, token)
    try:
        with cancellation.of(token), progress.to(watcher.report):
            result = uploads.upsert_item(
                collection=job.collection,
                title=job.title,
                content=bytes(job.content),
                mime_type=job.mime_type,
                external_id=job.external_id,
                metadata=job.metadata,
                document=job.document,
                embedder=get_embedder(),
                store=get_chunk_store(),
            )
    except (cancellation.Cancelled, InvalidArgument) as exc:
        watcher.stop()  # before the job's last word, which no progress may overwrite
        if token.cancelled:
            finish(job, IngestJob.Status.CANCELLED, error=CANCELLED_ERROR, progress="cancelled")
            return {"job_id": job_uid, "status": "cancelled"}
        finish(job, IngestJob.Status.FAILED, error=str(exc), progress="failed")
        return {"job_id": job_uid, "status": "failed", "error": str(exc)}
    except Exception as exc:
        watcher.stop()
        logger.exception("ingest job %s failed", job_uid)
        finish(
            job,
            IngestJob.Status.FAILED,
            error=f"internal error ({type(exc).__name__}); see the server log",
            progress="failed",
        )
        raise
    watcher.stop()
    finish(job, IngestJob.Status.COMPLETE, item=result.item, outcome=result.outcome.value, progress="done")
    return {"job_id": job_uid, "status": "complete", "item_uid": result.item.uid}
