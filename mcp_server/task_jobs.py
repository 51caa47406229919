"""The background jobs an MCP client follows as tasks, whichever revision it speaks: the job of a
queued upload (`upsert_item`) or of a source's sync (`sync_source`), the same row
`get_ingestion_status` and the console show. Both task
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
from mcp_server.tools.items import render_upsert, upserted
from mcp_server.tools.sources import render_sync, synced
from mnemosyne.ingestion import job_watch
from mnemosyne.library.models import IngestJob

POLL_INTERVAL_MS = 1000
# The tools whose queued work becomes a task.
TASK_TOOLS = frozenset({"upsert_item", "sync_source"})
# A page of tasks/list.
PAGE = 50

TaskStatus = Literal["working", "completed", "failed", "cancelled"]
STATUS: dict[str, TaskStatus] = {
    IngestJob.Status.QUEUED: "working",
    IngestJob.Status.RUNNING: "working",
    IngestJob.Status.COMPLETE: "completed",
    IngestJob.Status.FAILED: "failed",
    IngestJob.Status.CANCELLED: "cancelled",
}


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


def queued_job(tool: str, result: Any) -> str | None:
    """The job id of a tool result that says its work was queued (a wire dict or a CallToolResult)."""
    if tool not in TASK_TOOLS:
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
    job_id = found.get("job_id")
    return job_id if isinstance(job_id, str) else None


def view(job: IngestJob) -> TaskView:
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


def _tool_result(text: str, structured: BaseModel) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured.model_dump(mode="json"),
        "isError": False,
    }


def _jobs() -> Any:
    related = ("item__collection__library", "collection", "source")
    return IngestJob.objects.select_related(*related).defer("content")


def own_job(task_id: object) -> IngestJob:
    """The caller's job of this id, within the libraries it sees; else the unknown-task error."""
    allowed = decision.current()
    if allowed is None or not isinstance(task_id, str):
        raise MCPError(INVALID_PARAMS, "no task with this id")
    caller = allowed.principal
    job = _jobs().filter(uid=task_id[:64], requested_by=caller.caller_key).first()
    if job is None or not job.requested_by or not caller.sees(job.collection.library_id):
        raise MCPError(INVALID_PARAMS, f"no task with id {task_id[:64]!r}")
    return job


def own_task(task_id: object) -> TaskView:
    return view(own_job(task_id))


def cancel(task_id: object) -> TaskView:
    """Ask the caller's task to stop (a queued job at once, a running one at its next step)."""
    job = own_job(task_id)
    job_watch.cancel(job.uid)
    return own_task(job.uid)


def own_tasks(offset: int) -> tuple[list[TaskView], bool]:
    """A page of the caller's tasks, newest first, and whether more follow."""
    allowed = decision.current()
    if allowed is None or not allowed.principal.caller_key:
        return [], False
    caller = allowed.principal
    jobs = _jobs().filter(requested_by=caller.caller_key).order_by("-created_at", "-id")
    if caller.library_ids is not None:
        jobs = jobs.filter(collection__library_id__in=caller.library_ids)
    found = list(jobs[offset : offset + PAGE + 1])
    return [view(job) for job in found[:PAGE]], len(found) > PAGE
