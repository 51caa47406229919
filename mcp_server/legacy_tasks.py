"""Long work as tasks for 2025-11-25 clients: the task API of that revision, over the same jobs as
the 2026-07-28 extension (task_jobs.py).

- `initialize` on 2025-11-25 declares `capabilities.tasks` (tools/call, list, cancel), and
  `tools/list` marks the tools whose work is queued (task_jobs.TASK_TOOLS: `upsert_item`,
  `sync_source`, `run_evaluation`, `reembed_library`) `execution.taskSupport: "optional"`;
- `tools/call` of one of them with `task` answers a `CreateTaskResult` (`upsert_item` queues the
  upload for a worker, as `background: true`; the others always queue); another tool asked for as
  a task is -32601;
- `tasks/get` (the task), `tasks/result` (waits until it ends: the tool's result, or the error
  the job ended with), `tasks/list` (the caller's tasks, newest first, paged), `tasks/cancel`
  (a queued upload dropped, a running one stopped at its next step; an ended task is -32602).

The `mcp` SDK 2.3 serves none of this on 2025-11-25 (its result validation knows `tools/call` only
as a `CallToolResult` and has no `tasks/*` methods there), so it is done here, as a server
middleware: one that answers without calling on owns its result, and the SDK sends it as is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, METHOD_NOT_FOUND
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_server import cursors, task_jobs
from mnemosyne.lib import blocking
from mnemosyne.library.errors import InvalidArgument

VERSION = "2025-11-25"
CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
RELATED_TASK = "io.modelcontextprotocol/related-task"
TASK_METHODS = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})
# tasks/result waits this long for a task to end, looking every RESULT_POLL seconds, and then says
# it is still working (a client asks again).
RESULT_WAIT_SECONDS = 300.0
RESULT_POLL_SECONDS = 0.5


async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return await call_next(ctx)
    params = ctx.params or {}
    if ctx.method == "initialize":
        return _with_capability(await call_next(ctx))
    if ctx.protocol_version != VERSION:
        return await call_next(ctx)
    if ctx.method == "tools/list":
        return _marked(await call_next(ctx))
    if ctx.method == "tools/call" and params.get("task") is not None:
        return await _call_as_task(ctx, call_next, params)
    if ctx.method in TASK_METHODS:
        return await _task_method(ctx.method, params)
    return await call_next(ctx)


def _with_capability(result: HandlerResult) -> HandlerResult:
    if isinstance(result, dict) and result.get("protocolVersion") == VERSION:
        capabilities = result.setdefault("capabilities", {})
        capabilities["tasks"] = CAPABILITY
    return result


def _marked(result: HandlerResult) -> HandlerResult:
    if isinstance(result, dict):
        for tool in result.get("tools", []):
            if tool.get("name") in task_jobs.TASK_TOOLS:
                tool["execution"] = {"taskSupport": "optional"}
    return result


async def _call_as_task(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext, params: Mapping[str, Any]
) -> HandlerResult:
    name = params.get("name")
    if name not in task_jobs.TASK_TOOLS:
        raise MCPError(METHOD_NOT_FOUND, f"{str(name)[:100]} does not run as a task; call it without `task`")
    sent = {key: value for key, value in params.items() if key != "task"}
    arguments = params.get("arguments")
    if name == "upsert_item" and isinstance(arguments, dict):
        # An upload asked for as a task is queued, whatever its size (a sync always is).
        if arguments.get("background") is False:
            raise MCPError(
                INVALID_PARAMS, "a task runs in the background: leave out `background` or make it true"
            )
        sent["arguments"] = {**arguments, "background": True}
    result = await call_next(dataclasses.replace(ctx, params=sent))
    job_id = task_jobs.queued_job(name, result)
    if job_id is None:
        # Refused before any work was queued (a bad argument, an unreadable document): said as is.
        return result
    task = await blocking.run(task_jobs.queued_task, job_id)
    return result if task is None else {"task": task_of(task)}


async def _task_method(method: str, params: Mapping[str, Any]) -> HandlerResult:
    if method == "tasks/list":
        return await blocking.run(_listed, params.get("cursor"))
    task_id = params.get("taskId")
    if method == "tasks/get":
        return task_of(await blocking.run(task_jobs.own_task, task_id))
    if method == "tasks/cancel":
        return task_of(await blocking.run(_cancelled, task_id))
    return await _result(task_id)


def task_of(task: task_jobs.TaskView) -> dict[str, Any]:
    """The task as 2025-11-25's `Task`."""
    return task.wire(ttl="ttl", poll_interval="pollInterval")


def _cancelled(task_id: object) -> task_jobs.TaskView:
    task = task_jobs.own_task(task_id)
    if task.ended:
        raise MCPError(INVALID_PARAMS, f"the task has already ended ({task.status}); nothing to cancel")
    return task_jobs.cancel(task_id)


async def _result(task_id: object) -> HandlerResult:
    """The task's result once it has ended (waiting for that): the tool's, or its error."""
    task = await blocking.run(task_jobs.own_task, task_id)
    with anyio.move_on_after(RESULT_WAIT_SECONDS):
        while not task.ended:
            await anyio.sleep(RESULT_POLL_SECONDS)
            task = await blocking.run(task_jobs.own_task, task_id)
    if not task.ended:
        raise MCPError(INVALID_PARAMS, "the task is still working; ask for its result again")
    if task.status == "cancelled":
        raise MCPError(INVALID_PARAMS, "the task was cancelled; it has no result")
    if task.error is not None:
        raise MCPError(task.error[0], task.error[1])
    result = dict(task.result or {})
    result["_meta"] = {**result.get("_meta", {}), RELATED_TASK: {"taskId": task.task_id}}
    return result


def _listed(cursor: object) -> dict[str, Any]:
    offset = 0
    if cursor is not None:
        if not isinstance(cursor, str):
            raise MCPError(INVALID_PARAMS, "cursor must be a string")
        try:
            offset = cursors.decode("tasks", cursor, arguments={})
        except InvalidArgument as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from None
    tasks, more = task_jobs.own_tasks(offset)
    listed: dict[str, Any] = {"tasks": [task_of(task) for task in tasks]}
    if more:
        listed["nextCursor"] = cursors.encode("tasks", offset=offset + len(tasks), arguments={})
    return listed
