"""Long work as MCP tasks: the 2026-07-28 Tasks extension (`io.modelcontextprotocol/tasks`).

An upload `upsert_item` queues for a background worker (a large document, or `background: true`)
is answered, to a client whose request declares the extension, with a task handle
(`resultType: "task"`) instead of the `queued` result — the task is the upload's job, the same one
`get_ingestion_status` and the console show, not a second mechanism:

- `tasks/get`: `working` (with where it is: "embedded 256 of 812 chunks"), `completed` with the
  result `upsert_item` would have given, `failed` with the reason, or `cancelled`;
- `tasks/cancel`: a queued upload is dropped at once, a running one stops at its next step and
  keeps nothing (a new item is removed; one being replaced keeps its chunks); a finished task is
  left as it ended;
- `tasks/update`: refused — an upload never waits for input.

A task belongs to the caller that asked for it (access.principal's `caller_key`), within the
libraries it may see: another caller's task id is answered as an unknown one (-32602), which says
nothing of what exists. Tasks are kept as long as their jobs (`ttlMs: null`); poll every second.
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS, CallToolRequestParams, CallToolResult
from mcp_types import RequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from access import decision
from mcp_server.tools.items import render_upsert, upserted
from mnemosyne.ingestion import upload_jobs
from mnemosyne.lib import blocking
from mnemosyne.library.models import IngestJob

EXTENSION_ID = "io.modelcontextprotocol/tasks"
POLL_INTERVAL_MS = 1000
STATUS = {
    IngestJob.Status.QUEUED: "working",
    IngestJob.Status.RUNNING: "working",
    IngestJob.Status.COMPLETE: "completed",
    IngestJob.Status.FAILED: "failed",
    IngestJob.Status.CANCELLED: "cancelled",
}
# The tools whose queued work becomes a task.
TASK_TOOLS = frozenset({"upsert_item"})


class TaskParams(RequestParams):
    task_id: str


class UpdateParams(TaskParams):
    input_responses: dict[str, Any] | None = None


class Tasks(Extension):
    identifier = EXTENSION_ID

    def methods(self) -> list[MethodBinding]:
        modern = frozenset(MODERN_PROTOCOL_VERSIONS)
        return [
            MethodBinding("tasks/get", TaskParams, _get, protocol_versions=modern),
            MethodBinding("tasks/cancel", TaskParams, _cancel, protocol_versions=modern),
            MethodBinding("tasks/update", UpdateParams, _update, protocol_versions=modern),
        ]

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        result = await call_next(ctx)
        job_id = _queued_job(params.name, result)
        if job_id is None or not _client_has_tasks(ctx):
            return result
        task = await blocking.run(_own_task, job_id)
        return {**task, "resultType": "task"}


def _queued_job(tool: str, result: HandlerResult) -> str | None:
    if tool not in TASK_TOOLS or not isinstance(result, CallToolResult) or result.is_error:
        return None
    found = result.structured_content or {}
    job_id = found.get("job_id") if found.get("status") == "queued" else None
    return job_id if isinstance(job_id, str) else None


def _client_has_tasks(ctx: ServerRequestContext[Any, Any]) -> bool:
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = ctx.session.client_capabilities
    extensions = (capabilities.extensions if capabilities is not None else None) or {}
    return EXTENSION_ID in extensions


def task_of(job: IngestJob) -> dict[str, Any]:
    """The job as a task (the extension's DetailedTask, without `resultType`)."""
    status = STATUS[IngestJob.Status(job.status)]
    task: dict[str, Any] = {
        "taskId": job.uid,
        "status": status,
        "createdAt": job.created_at.isoformat(),
        "lastUpdatedAt": (job.updated_at or job.created_at).isoformat(),
        "ttlMs": None,
        "pollIntervalMs": POLL_INTERVAL_MS,
    }
    if job.progress:
        task["statusMessage"] = job.progress
    if status == "completed" and job.item is not None:
        # What upsert_item would have answered had it ingested the document at once.
        item = job.item
        result = upserted(item, job.outcome or "created", item.chunk_count, job.external_id)
        task["result"] = {
            "content": [{"type": "text", "text": render_upsert(result)}],
            "structuredContent": result.model_dump(mode="json"),
            "isError": False,
            "resultType": "complete",
        }
    elif status == "failed":
        internal = job.error.startswith("internal error")
        task["error"] = {"code": INTERNAL_ERROR if internal else INVALID_PARAMS, "message": job.error}
    return task


def _own_job(job_id: object) -> IngestJob:
    """The caller's job of this uid, within the libraries it sees; else the unknown-task error."""
    allowed = decision.current()
    if allowed is None or not isinstance(job_id, str):
        raise MCPError(INVALID_PARAMS, "no task with this id")
    caller = allowed.principal
    jobs = IngestJob.objects.select_related("item__collection", "collection").defer("content")
    job = jobs.filter(uid=job_id[:64], requested_by=caller.caller_key).first()
    if job is None or not job.requested_by or not caller.sees(job.collection.library_id):
        raise MCPError(INVALID_PARAMS, f"no task with id {job_id[:64]!r}")
    return job


def _own_task(job_id: object) -> dict[str, Any]:
    return task_of(_own_job(job_id))


async def _get(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
    task = await blocking.run(_own_task, params.task_id)
    return {**task, "resultType": "complete"}


async def _cancel(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
    def cancel() -> None:
        job = _own_job(params.task_id)
        upload_jobs.cancel(job.uid)

    await blocking.run(cancel)
    return {"resultType": "complete"}


async def _update(ctx: ServerRequestContext[Any, Any], params: UpdateParams) -> HandlerResult:
    await blocking.run(_own_job, params.task_id)
    raise MCPError(INVALID_PARAMS, "this task does not wait for input")
