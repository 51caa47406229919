"""A background job someone follows (library.models.IngestJob: an upload, a sync; or a
ReembedJob): while it runs, a watcher thread (one database connection, closed when the job ends)
writes where the work is (lib/progress.py: "embedded 256 of 812 chunks") to the job every half
second and reads whether it was asked to stop (`cancel_requested`, set by `cancel`); then the job's
cancellation token is cancelled, and the work stops at its next step (lib/cancellation.py). A
queued job is cancelled at once."""

from __future__ import annotations

import threading

from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from mnemosyne.lib import cancellation
from mnemosyne.library.models import IngestJob, ReembedJob, WorkStatus

# How often a running job's progress is written and its cancellation looked for.
WATCH_SECONDS = 0.5
CANCELLED_ERROR = "cancelled before it finished; nothing of it was kept"

Job = IngestJob | ReembedJob


def claim(model: type[Job], job_uid: str, progress: str, **matching: object) -> bool:
    """Take the queued job of this uid (and `matching`) for this worker: running from now on."""
    now = timezone.now()
    claimed = model.objects.filter(uid=job_uid, status=WorkStatus.QUEUED, **matching).update(
        status=WorkStatus.RUNNING, started_at=now, updated_at=now, progress=progress
    )
    return claimed > 0


def cancel(job_uid: str, model: type[Job] = IngestJob, *, error: str = CANCELLED_ERROR) -> str:
    """Ask the job to stop: a queued one is cancelled now (an upload's bytes dropped), a running
    one at its next step. Returns the job's status after asking (finished jobs stay as they ended)."""
    now = timezone.now()
    model.objects.filter(uid=job_uid, status=WorkStatus.QUEUED).update(
        status=WorkStatus.CANCELLED,
        finished_at=now,
        updated_at=now,
        error=error,
        progress="cancelled",
        **_released(model),
    )
    model.objects.filter(uid=job_uid, status=WorkStatus.RUNNING).update(
        cancel_requested=True, updated_at=now, progress="stopping"
    )
    status: str = model.objects.filter(uid=job_uid).values_list("status", flat=True).get()
    return status


def finish(job: Job, status: str, **fields: object) -> None:
    """The job's last word: how it ended (an upload's bytes dropped)."""
    now = timezone.now()
    model = type(job)
    model.objects.filter(pk=job.pk).update(
        status=status, finished_at=now, updated_at=now, **_released(model), **fields
    )


def _released(model: type[Job]) -> dict[str, object]:
    """What an ended job no longer keeps: an upload's bytes."""
    return {"content": b""} if model is IngestJob else {}


class Watcher:
    """The running job's progress written, and its cancellation read, from one thread."""

    def __init__(self, job: Job, token: cancellation.Token) -> None:
        self._model = type(job)
        self._job_pk = job.pk
        self._token = token
        self._said = ""
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"job-{job.pk}-watcher", daemon=True)
        self._thread.start()

    def report(self, text: str) -> None:
        with self._lock:
            self._said = text[:200]

    def stop(self) -> None:
        """Stop watching, once the last write is done (again: nothing)."""
        self._stopped.set()
        self._thread.join()

    def _run(self) -> None:
        written = ""
        try:
            while not self._stopped.wait(WATCH_SECONDS):
                with self._lock:
                    said = self._said
                try:
                    written = self._write(said, written)
                except DatabaseError:
                    # The job's own work meets the outage and says so; watching resumes after it.
                    continue
        finally:
            connection.close()

    def _write(self, said: str, written: str) -> str:
        close_old_connections()
        jobs = self._model.objects.filter(pk=self._job_pk)
        if said and said != written:
            jobs.update(progress=said, updated_at=timezone.now())
        if jobs.filter(cancel_requested=True).exists():
            self._token.cancel()
        return said or written
