"""Long work as MCP tasks: the 2026-07-28 Tasks extension (`io.modelcontextprotocol/tasks`).

A tool call whose work is queued for a background worker — `upsert_item` of a large document (or
`background: true`), `sync_source`, `run_evaluation`, `reembed_library` — is answered, to a client
whose request declares the extension, with a task handle (`resultType: "task"`) instead of the
`queued` result. The task is that work's job or run (task_jobs.py), the same one the console and
`get_ingestion_status` show, not a second mechanism:

- `tasks/get`: `working` (with where it is: "embedded 256 of 812 chunks"), `completed` with the
  result the tool gives for the finished work, `failed` with the reason, or `cancelled`;
- `tasks/cancel`: queued work is dropped at once, running work stops at its next step (an upload
  keeps nothing; a sync keeps the documents it finished; a run the questions it answered; a
  re-embedding changes nothing); a finished task is left as it ended;
- `tasks/update`: refused — none of this work waits for input.

A task is its caller's (task_jobs.py). Tasks are kept as long as their jobs (`ttlMs: null`); poll
every second.
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolRequestParams
from mcp_types import RequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_server import task_jobs
from mnemosyne.lib import blocking

EXTENSION_ID = "io.modelcontextprotocol/tasks"


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
        job_id = task_jobs.queued_job(params.name, result)
        if job_id is None or not _client_has_tasks(ctx):
            return result
        task = await blocking.run(task_jobs.queued_task, job_id)
        return result if task is None else {**task_of(task), "resultType": "task"}


def _client_has_tasks(ctx: ServerRequestContext[Any, Any]) -> bool:
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = ctx.session.client_capabilities
    extensions = (capabilities.extensions if capabilities is not None else None) or {}
    return EXTENSION_ID in extensions


def task_of(task: task_jobs.TaskView) -> dict[str, Any]:
    """The task as the extension's DetailedTask (without `resultType`)."""
    found = task.wire(ttl="ttlMs", poll_interval="pollIntervalMs")
    if task.result is not None:
        found["result"] = {**task.result, "resultType": "complete"}
    if task.error is not None:
        found["error"] = {"code": task.error[0], "message": task.error[1]}
    return found


async def _get(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
    task = await blocking.run(task_jobs.own_task, params.task_id)
    return {**task_of(task), "resultType": "complete"}


async def _cancel(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
    await blocking.run(task_jobs.cancel, params.task_id)
    return {"resultType": "complete"}


async def _update(ctx: ServerRequestContext[Any, Any], params: UpdateParams) -> HandlerResult:
    await blocking.run(task_jobs.own_task, params.task_id)
    raise MCPError(INVALID_PARAMS, "this task does not wait for input")
