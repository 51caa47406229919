"""The background work an MCP client follows as tasks, whichever revision it speaks: the job of a
queued upload (`upsert_item`) or of a source's sync (`sync_source`) — the row `get_ingestion_status`
and the console show —, an evaluation run (`run_evaluation`, the console's own runs) and a
library's re-embedding (`reembed_library`). Both task
APIs read them here — the 2026-07-28 Tasks extension (mcp_tasks.py) and the 2025-11-25 task
methods (legacy_tasks.py) — so there is one notion of a task, its owner, its state and its result.

A task belongs to the caller that asked for it (access.principal's `caller_key`), within the
libraries it may see: another caller's task id is answered exactly as an id that exists nowhere
(-32602), which says nothing of what exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS
from pydantic import BaseModel

from access import decision
from access.principal import Principal
from mcp_server.tools.evaluation import render_run, run_state
from mcp_server.tools.items import render_upsert, upserted
from mcp_server.tools.reembedding import reembed_state, render_reembed
from mcp_server.tools.sources import render_sync, synced
from mnemosyne.evaluation import runs
from mnemosyne.evaluation.models import Run
from mnemosyne.ingestion import job_watch, reembed_jobs
from mnemosyne.library.models import IngestJob, ReembedJob

POLL_INTERVAL_MS = 1000
# The tools whose queued work becomes a task, and the field of their result that names it.
TASK_TOOLS = {
    "upsert_item": "job_id",
    "sync_source": "job_id",
    "run_evaluation": "run_id",
    "reembed_library": "job_id",
}
# A page of tasks/list.
PAGE = 50

TaskStatus = Literal["working", "completed", "failed", "cancelled"]
# A job's, a run's or a re-embedding's status as a task's (they share their words but for a run's
# "done").
STATUS: dict[str, TaskStatus] = {
    "queued": "working",
    "running": "working",
    "complete": "completed",
    "done": "completed",
    "failed": "failed",
    "cancelled": "cancelled",
}
RUN_PREFIX = "run_"
REEMBED_PREFIX = "emb_"


@dataclass(frozen=True)
class TaskView:
    """A job as a task: where it is, and once it ended, its result or the error it ended with."""

    task_id: str
    status: TaskStatus
    message: str
    created_at: datetime
    updated_at: datetime
    # The tool's result (a CallToolResult on the wire), once completed.
    result: dict[str, Any] | None = None
    # (JSON-RPC code, message), once failed.
    error: tuple[int, str] | None = None

    @property
    def ended(self) -> bool:
        return self.status != "working"

    def wire(self, *, ttl: str, poll_interval: str) -> dict[str, Any]:
        """The task's fields both revisions send, under the names each gives the two that differ
        (2025-11-25: ttl, pollInterval; the 2026-07-28 extension: ttlMs, pollIntervalMs)."""
        found: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at.isoformat(),
            "lastUpdatedAt": self.updated_at.isoformat(),
            # Kept as long as the job it is.
            ttl: None,
            poll_interval: POLL_INTERVAL_MS,
        }
        if self.message:
            found["statusMessage"] = self.message
        return found


def queued_job(tool: str, result: Any) -> str | None:
    """The task id of a tool result that says its work was queued (a wire dict or a CallToolResult)."""
    field = TASK_TOOLS.get(tool)
    if field is None:
        return None
    if isinstance(result, dict):
        wire = result
    elif isinstance(result, BaseModel):
        wire = result.model_dump(by_alias=True, mode="json")
    else:
        return None
    found = wire.get("structuredContent") or {}
    if wire.get("isError") or found.get("status") != "queued":
        return None
    task_id = found.get(field)
    return task_id if isinstance(task_id, str) else None


def job_view(job: IngestJob) -> TaskView:
    status = STATUS[job.status]
    result = error = None
    if status == "completed" and job.kind == IngestJob.Kind.SYNC:
        # What sync_source answers for a sync that has ended.
        ended = synced(job)
        result = _tool_result(render_sync(ended), ended)
    elif status == "completed" and job.item is not None:
        # What upsert_item would have answered had it ingested the document at once.
        item = job.item
        done = upserted(item, job.outcome or "created", item.chunk_count, job.external_id)
        result = _tool_result(render_upsert(done), done)
    elif status == "failed":
        internal = job.error.startswith("internal error")
        error = (INTERNAL_ERROR if internal else INVALID_PARAMS, job.error)
    return TaskView(
        task_id=job.uid,
        status=status,
        message=job.progress,
        created_at=job.created_at,
        updated_at=job.updated_at or job.created_at,
        result=result,
        error=error,
    )


def run_view(run: Run) -> TaskView:
    status = STATUS[run.status]
    message = f"answered {run.done} of {run.total} questions"
    if run.stalled:
        message += "; its worker stopped: resume it from the console"
    result = error = None
    if status == "completed":
        # What get_evaluation_run answers for the run.
        state = run_state(run)
        result = _tool_result(render_run(state), state)
    elif status == "failed":
        internal = "internal error" in run.error
        error = (INTERNAL_ERROR if internal else INVALID_PARAMS, run.error)
    return TaskView(
        task_id=run.uid,
        status=status,
        message=message,
        created_at=run.created_at,
        updated_at=run.finished_at or run.heartbeat_at or run.started_at or run.created_at,
        result=result,
        error=error,
    )


def reembed_view(job: ReembedJob) -> TaskView:
    status = STATUS[job.status]
    result = error = None
    if status == "completed":
        state = reembed_state(job)
        result = _tool_result(render_reembed(state), state)
    elif status == "failed":
        error = (INTERNAL_ERROR if job.error.startswith("internal error") else INVALID_PARAMS, job.error)
    return TaskView(
        task_id=job.uid,
        status=status,
        message=job.progress,
        created_at=job.created_at,
        updated_at=job.updated_at or job.created_at,
        result=result,
        error=error,
    )


def _tool_result(text: str, structured: BaseModel) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured.model_dump(mode="json"),
        "isError": False,
    }


def _jobs() -> Any:
    related = ("item__collection__library", "collection", "source")
    return IngestJob.objects.select_related(*related).defer("content")


def _runs() -> Any:
    return Run.objects.select_related("evaluation_set__library")


def _caller() -> Principal | None:
    allowed = decision.current()
    return allowed.principal if allowed is not None and allowed.principal.caller_key else None


def _own(task_id: object) -> IngestJob | Run | ReembedJob:
    """The caller's job or run of this id, within the libraries it sees (a run or a re-embedding:
    that it manages); else the unknown-task error, which says nothing of what exists."""
    caller = _caller()
    if caller is None or not isinstance(task_id, str):
        raise MCPError(INVALID_PARAMS, "no task with this id")
    uid = task_id[:64]
    unknown = MCPError(INVALID_PARAMS, f"no task with id {uid!r}")
    if uid.startswith(RUN_PREFIX):
        run = _runs().filter(uid=uid, requested_by=caller.caller_key).first()
        if run is None or not caller.manages(run.evaluation_set.library_id):
            raise unknown
        return run
    if uid.startswith(REEMBED_PREFIX):
        reembedding = ReembedJob.objects.select_related("library").filter(
            uid=uid, requested_by=caller.caller_key
        )
        found = reembedding.first()
        if found is None or not caller.manages(found.library_id):
            raise unknown
        return found
    job = _jobs().filter(uid=uid, requested_by=caller.caller_key).first()
    if job is None or not caller.sees(job.collection.library_id):
        raise unknown
    return job


def _view(found: IngestJob | Run | ReembedJob) -> TaskView:
    if isinstance(found, Run):
        return run_view(found)
    if isinstance(found, ReembedJob):
        return reembed_view(found)
    return job_view(found)


def own_task(task_id: object) -> TaskView:
    return _view(_own(task_id))


def queued_task(task_id: str) -> TaskView | None:
    """The task of work a tool call just queued, when it is the caller's (a re-embedding already under
    way for another caller is not: that call is answered as the tool answered it)."""
    try:
        return own_task(task_id)
    except MCPError:
        return None


def cancel(task_id: object) -> TaskView:
    """Ask the caller's task to stop: a queued job or run at once, a running one at its next step
    (a job between two steps of its work, a run before its next question)."""
    found = _own(task_id)
    if isinstance(found, Run):
        runs.cancel(found)
    elif isinstance(found, ReembedJob):
        reembed_jobs.cancel(found.uid)
    else:
        job_watch.cancel(found.uid)
    return own_task(found.uid)


def own_tasks(offset: int) -> tuple[list[TaskView], bool]:
    """A page of the caller's tasks, newest first, and whether more follow."""
    caller = _caller()
    if caller is None:
        return [], False
    jobs = _jobs().filter(requested_by=caller.caller_key).order_by("-created_at", "-id")
    if caller.library_ids is not None:
        jobs = jobs.filter(collection__library_id__in=caller.library_ids)
    evaluations = _runs().filter(requested_by=caller.caller_key).order_by("-created_at", "-id")
    if caller.managed_ids is not None:
        evaluations = evaluations.filter(evaluation_set__library_id__in=caller.managed_ids)
    if caller.library_ids is not None:
        evaluations = evaluations.filter(evaluation_set__library_id__in=caller.library_ids)
    reembeddings = ReembedJob.objects.select_related("library").filter(requested_by=caller.caller_key)
    if caller.managed_ids is not None:
        reembeddings = reembeddings.filter(library_id__in=caller.managed_ids)
    if caller.library_ids is not None:
        reembeddings = reembeddings.filter(library_id__in=caller.library_ids)
    # The newest offset + PAGE + 1 of each, merged: the page is among them.
    wanted = offset + PAGE + 1
    merged: list[IngestJob | Run | ReembedJob] = [
        *jobs[:wanted],
        *evaluations[:wanted],
        *reembeddings.order_by("-created_at", "-id")[:wanted],
    ]
    merged.sort(key=lambda found: found.created_at, reverse=True)
    page = merged[offset:wanted]
    return [_view(found) for found in page[:PAGE]], len(page) > PAGE
