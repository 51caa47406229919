"""Evaluation runs over MCP (mcp_server/tools/evaluation.py): a library's managers list its sets,
start a run — the console's own background run — and follow it, or follow it as a task of either
revision (task_jobs.py) to its measures, or cancel it; anyone else is answered as if the set or
run did not exist."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from access.services import create_token
from mnemosyne.evaluation import runs
from mnemosyne.evaluation.models import EvaluationSet, Run, RunStatus
from tests.evaluation.corpus import science_set
from tests.mcp_server.clients import MODERN
from tests.mcp_server.clients import answer as call

pytestmark = pytest.mark.django_db(transaction=True)


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


@pytest.fixture
def evaluation_set() -> EvaluationSet:
    return science_set()


def test_a_manager_runs_a_set_as_a_task_of_either_revision_to_its_measures(
    in_process_url: str, evaluation_set: EvaluationSet
) -> None:
    boss = User.objects.create(username="boss", is_superuser=True)
    _, token = create_token(user=boss, name="manager", scopes=["read", "write"])

    (listed,) = call("tools/call", tool("list_evaluation_sets"), token, in_process_url)["result"][
        "structuredContent"
    ]["sets"]
    assert listed["evaluation_set_uid"] == evaluation_set.uid and listed["questions"] == 7
    assert listed["last_run"] is None

    # 2025-11-25: asked for as a task, the run is one; the worker runs it; tasks/result: its measures.
    created = call(
        "tools/call",
        {
            **tool(
                "run_evaluation",
                evaluation_set_uid=evaluation_set.uid,
                label="first",
                search_types=["fulltext"],
            ),
            "task": {},
        },
        token,
        in_process_url,
    )["result"]["task"]
    run = Run.objects.get(uid=created["taskId"])
    assert (
        run.status == RunStatus.QUEUED
        and run.label == "first"
        and created["statusMessage"] == "answered 0 of 7 questions"
    )
    runs.execute(run)
    result = call("tasks/result", {"taskId": run.uid}, token, in_process_url)["result"]["structuredContent"]
    assert result["status"] == "done" and result["done"] == 7 and 0 <= result["measures"]["ndcg@10"] <= 1
    followed = call("tools/call", tool("get_evaluation_run", run_id=run.uid), token, in_process_url)["result"]
    assert followed["structuredContent"]["measures"] == result["measures"]
    assert "ndcg@10" in followed["content"][0]["text"]

    # 2026-07-28 with the Tasks extension: a task, cancelled while queued; it never runs.
    second = call(
        "tools/call",
        tool("run_evaluation", evaluation_set_uid=evaluation_set.uid),
        token,
        in_process_url,
        MODERN,
    )["result"]
    assert second["resultType"] == "task" and second["status"] == "working"
    call("tasks/cancel", {"taskId": second["taskId"]}, token, in_process_url, MODERN)
    assert (
        call("tasks/get", {"taskId": second["taskId"]}, token, in_process_url, MODERN)["result"]["status"]
        == "cancelled"
    )
    assert runs.execute(Run.objects.get(uid=second["taskId"])).status == RunStatus.CANCELLED

    # The caller's tasks: both runs, newest first.
    tasks = call("tasks/list", {}, token, in_process_url)["result"]["tasks"]
    assert [task["taskId"] for task in tasks] == [second["taskId"], run.uid]


def test_only_a_librarys_managers_see_and_run_its_evaluations(
    in_process_url: str, evaluation_set: EvaluationSet
) -> None:
    boss = User.objects.create(username="boss", is_superuser=True)
    _, manager = create_token(user=boss, name="manager", scopes=["read", "write"])
    clerk = User.objects.create(username="clerk")
    _, editor = create_token(user=clerk, name="editor", scopes=["read", "write"])
    started = call(
        "tools/call", tool("run_evaluation", evaluation_set_uid=evaluation_set.uid), manager, in_process_url
    )
    run_id = started["result"]["structuredContent"]["run_id"]

    assert call("tools/call", tool("list_evaluation_sets"), editor, in_process_url)["result"][
        "structuredContent"
    ] == {"sets": []}
    pairs = (
        ("run_evaluation", "evaluation_set_uid", evaluation_set.uid, "set_nowhere0000000"),
        ("get_evaluation_run", "run_id", run_id, "run_nowhere0000000"),
    )
    for name, argument, real, unknown in pairs:
        theirs = call("tools/call", tool(name, **{argument: real}), editor, in_process_url)["result"]
        nowhere = call("tools/call", tool(name, **{argument: unknown}), editor, in_process_url)["result"]
        assert theirs["isError"] and nowhere["isError"]
        assert theirs["content"][0]["text"].replace(real, "UID") == nowhere["content"][0]["text"].replace(
            unknown, "UID"
        )
    # Another caller's run is no task of theirs either.
    other = call("tasks/get", {"taskId": run_id}, editor, in_process_url)["error"]
    assert other["code"] == -32602 and run_id in other["message"]
    assert Run.objects.count() == 1
