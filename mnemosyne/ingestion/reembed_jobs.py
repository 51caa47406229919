"""A library re-embedded with the server's model in the background (`reembed_library`), as a job
(library.models.ReembedJob) a worker runs with reembedding.py: the new vectors built beside the
old, then one switch. While it runs, job_watch.py writes where it is ("embedded 1,024 of 5,210
chunks") and watches for a cancel: the staging stops between two batches — or the switch's
transaction rolls back —, and the library keeps its vectors and model. The worker embeds with its
own `EMBEDDING_MODEL`, which is the one the library is asked to move to (the servers' own).
"""

from __future__ import annotations

import logging

from mnemosyne.embedding import EmbeddingError, get_embedder
from mnemosyne.ingestion import job_watch
from mnemosyne.ingestion.job_watch import Watcher, claim, finish
from mnemosyne.ingestion.reembedding import reembed
from mnemosyne.lib import cancellation, progress
from mnemosyne.library.errors import LibraryError
from mnemosyne.library.models import ReembedJob

logger = logging.getLogger(__name__)
CANCELLED = "cancelled before the switch; the library keeps its vectors and its model"


def run_reembed(job_uid: str) -> dict[str, object]:
    """The reembed_library task's body: claim the job, re-embed, record how it ended."""
    if not claim(ReembedJob, job_uid, "loading the model"):
        return {"job_id": job_uid, "skipped": "not queued"}
    job = ReembedJob.objects.select_related("library").get(uid=job_uid)
    token = cancellation.Token()
    watcher = Watcher(job, token)
    chunks = 0

    def report(done: int, total: int) -> None:
        nonlocal chunks
        chunks = done
        progress.report(f"embedded {done:,} of {total:,} chunks")

    try:
        embedder = get_embedder()
        if embedder.model_id != job.model:
            raise LibraryError(f"this worker embeds with {embedder.model_id!r}, not {job.model!r}")
        with cancellation.of(token), progress.to(watcher.report):
            done = reembed(job.library, embedder, report=report)
    except cancellation.Cancelled:
        watcher.stop()
        finish(job, ReembedJob.Status.CANCELLED, error=CANCELLED, progress="cancelled", done=chunks)
        return {"job_id": job_uid, "status": "cancelled"}
    except (EmbeddingError, LibraryError) as exc:
        watcher.stop()
        finish(job, ReembedJob.Status.FAILED, error=f"{exc} (nothing was changed)", progress="failed")
        return {"job_id": job_uid, "status": "failed", "error": str(exc)}
    except Exception as exc:
        watcher.stop()
        logger.exception("re-embedding job %s failed", job_uid)
        error = f"internal error ({type(exc).__name__}); see the server log (nothing was changed)"
        finish(job, ReembedJob.Status.FAILED, error=error, progress="failed")
        raise
    watcher.stop()
    finish(job, ReembedJob.Status.COMPLETE, progress="done", done=done)
    return {"job_id": job_uid, "status": "complete", "chunks": done}


def cancel(job_uid: str) -> str:
    """Ask the job to stop: a queued one is cancelled now, a running one at its next batch (before
    the switch; once switched it completes). Returns its status after asking."""
    return job_watch.cancel(job_uid, ReembedJob, error=CANCELLED)
