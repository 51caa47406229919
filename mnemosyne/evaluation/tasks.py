"""The evaluation run as a background task: `manage.py db_worker` (the one `make run` and `serve`
start) executes runs queued from the console, one question after another, with progress."""

from __future__ import annotations

from django.db import transaction
from django.tasks import task

from mnemosyne.evaluation.models import Run
from mnemosyne.evaluation.runs import execute
from mnemosyne.ingestion.task_timing import timed


@task
@timed
def run_evaluation(*, run_uid: str) -> dict[str, object]:
    run = Run.objects.filter(uid=run_uid).select_related("evaluation_set__library").first()
    if run is None:
        return {"run": run_uid, "status": "gone"}
    run = execute(run)
    return {"run": run.uid, "status": run.status, "done": run.done}


def queue(run: Run) -> None:
    """The run, for the background worker, once the transaction that made it commits."""
    transaction.on_commit(lambda: run_evaluation.enqueue(run_uid=run.uid))
