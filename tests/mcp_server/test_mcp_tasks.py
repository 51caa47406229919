"""Long uploads as MCP tasks (2026-07-28 Tasks extension, mcp_server/mcp_tasks.py), against uvicorn
and a real `db_worker`: the extension's own TypeScript client (@modelcontextprotocol/ext-tasks)
uploads a 300-page PDF and follows the task to its result, and cancels a second one midway with
nothing of it kept; over HTTP, another caller's task is an unknown one, a cancelled task queried
again says so, and input is refused. In process, a cancel that arrives while the chunks are being
embedded stops there and removes the new item."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from access.services import create_token
from mcp_server import task_jobs
from mnemosyne.embedding import Embedder
from mnemosyne.evaluation.models import RunStatus
from mnemosyne.ingestion import job_watch, tasks, upload_jobs
from mnemosyne.library.models import Chunk, Collection, IngestJob, Item, ReembedJob
from mnemosyne.library.services import ensure_collection, ensure_library
from tests.documents import pdf_bytes
from tests.mcp_server.clients import LEGACY, MODERN, answer, post, rpc, sse_payload
from tests.server_fixtures import node_script
from tests.servers import db_worker
from tests.stand_in_embedder import StandInEmbedder

pytestmark = pytest.mark.django_db(transaction=True)
CLIENT = Path(__file__).parent / "sdk_clients" / "typescript_tasks.mjs"
LEGACY_CLIENT = Path(__file__).parent / "sdk_clients" / "typescript_legacy_tasks.mjs"
WORDS = [
    "harbour",
    "vessel",
    "pilot",
    "berth",
    "cargo",
    "quarantine",
    "tide",
    "anchor",
    "crane",
    "customs",
    "manifest",
    "ledger",
    "dock",
]


def manual(pages: int, seed: int) -> bytes:
    """A text PDF of `pages` pages, eight lines each, its words drawn by `seed`."""
    draw = random.Random(seed)
    lines = [
        [f"Rule {page}.{line}: " + " ".join(draw.choice(WORDS) for _ in range(14)) for line in range(8)]
        for page in range(pages)
    ]
    return pdf_bytes(lines, title=f"Harbour manual {seed}")


def uploaded_by(
    script: Path, base: str, home: Path, runs: tuple[tuple[str, int, int], ...]
) -> tuple[Collection, dict[str, dict[str, Any]]]:
    """A writer's token, and what the Node.js tasks client `script` saw of each (mode, seed, pages)
    run: a manual of `pages` pages uploaded into Harbour / manuals and followed to the end
    ("complete") or cancelled midway ("cancel")."""
    collection = ensure_collection(library=ensure_library(name="Harbour"), name="manuals")
    user = User.objects.create(username="uploader")
    _, token = create_token(user=user, name="write", scopes=["read", "write"])
    seen = {}
    for mode, seed, pages in runs:
        path = home / f"manual-{seed}.pdf"
        path.write_bytes(manual(pages, seed))
        seen[mode] = node_script(
            script, f"{base}/mcp/", token, collection.uid, str(path), mode, home=home, timeout=300
        )
    return collection, seen


@pytest.fixture
def worker(shared_data_dir: Path) -> Iterator[None]:
    with db_worker(shared_data_dir, log_name="tasks-worker"):
        yield


@pytest.mark.slow
def test_the_tasks_client_follows_an_upload_to_its_result_and_cancels_another_midway(
    live_server_url: str, worker: None, embedder: Embedder, tmp_path: Path
) -> None:
    collection, seen = uploaded_by(
        CLIENT, live_server_url, tmp_path, (("complete", 1, 300), ("cancel", 2, 300))
    )

    finished = seen["complete"]
    assert finished["kind"] == "task" and finished["outcome"] == "completed"
    assert {step["status"] for step in finished["seen"][:-1]} == {"working"}
    assert any(step["message"] for step in finished["seen"])
    result = finished["structured"]
    assert result["status"] == "created" and result["chunk_count"] > 300 and result["item_type"] == "pdf"
    item = Item.objects.get(uid=result["item_uid"])
    assert Chunk.objects.filter(item=item).count() == result["chunk_count"]
    assert IngestJob.objects.get(uid=finished["taskId"]).status == IngestJob.Status.COMPLETE

    stopped = seen["cancel"]
    assert stopped["kind"] == "task" and stopped["outcome"] == "cancelled"
    # Cancelling is cooperative (the client's lifetime ends with the server's acknowledgement): the
    # worker stops at its next step.
    job = _settled(stopped["taskId"])
    assert job.status == IngestJob.Status.CANCELLED and job.item is None and bytes(job.content) == b""
    # Nothing of it was kept: the manuals collection holds the first upload only.
    assert list(Item.objects.filter(collection=collection)) == [item]
    assert Chunk.objects.filter(item__collection=collection).exclude(item=item).count() == 0


@pytest.mark.slow
def test_the_v1_sdk_client_follows_an_upload_as_a_2025_task_and_cancels_another(
    live_server_url: str, worker: None, embedder: Embedder, tmp_path: Path
) -> None:
    runs = (("complete", 4, 120), ("cancel", 5, 300))
    collection, seen = uploaded_by(LEGACY_CLIENT, live_server_url, tmp_path, runs)

    finished = seen["complete"]
    assert finished["version"] == "2025-11-25" and finished["capability"]["requests"]["tools"]["call"] == {}
    assert finished["outcome"] == "completed" and finished["finalStatus"] == "completed"
    assert [step["status"] for step in finished["seen"]][-1] == "completed"
    assert any("embedded" in step["message"] or "reading" in step["message"] for step in finished["seen"])
    result = finished["structured"]
    assert result["status"] == "created" and result["chunk_count"] > 120
    item = Item.objects.get(uid=result["item_uid"])
    assert Chunk.objects.filter(item=item).count() == result["chunk_count"]

    stopped = seen["cancel"]
    assert stopped["outcome"] == "error" and "cancelled" in stopped["error"], stopped
    assert any(step["status"].startswith("cancel answered") for step in stopped["seen"])
    job = _settled(stopped["taskId"])
    assert job.status == IngestJob.Status.CANCELLED and job.item is None
    assert list(Item.objects.filter(collection=collection)) == [item]
    # The caller's tasks, newest first.
    assert stopped["listed"][:2] == [stopped["taskId"], finished["taskId"]]


def _settled(job_uid: str) -> IngestJob:
    deadline = time.monotonic() + 120
    while True:
        job = IngestJob.objects.get(uid=job_uid)
        if (
            job.status not in (IngestJob.Status.QUEUED, IngestJob.Status.RUNNING)
            or time.monotonic() > deadline
        ):
            return job
        time.sleep(0.2)


def test_a_task_is_its_callers_and_says_how_it_ended(
    in_process_url: str, corpus: tuple[Any, Collection]
) -> None:
    _, collection = corpus
    owner = User.objects.create(username="owner")
    _, mine = create_token(user=owner, name="mine", scopes=["read", "write"])
    _, theirs = create_token(user=owner, name="theirs", scopes=["read", "write"])
    upload = {
        "name": "upsert_item",
        "arguments": {
            "collection_uid": collection.uid,
            "title": "Tides",
            "text": "# Tides\n\nHigh water.",
            "background": True,
        },
    }
    created = answer("tools/call", upload, mine, in_process_url, MODERN)["result"]
    assert created["resultType"] == "task" and created["status"] == "working"
    task_id = created["taskId"]
    assert created["statusMessage"] == "waiting for a worker" and created["pollIntervalMs"] == 1000

    unknown = answer("tasks/get", {"taskId": "job_nowhere0000000"}, mine, in_process_url, MODERN)["error"]
    other = answer("tasks/get", {"taskId": task_id}, theirs, in_process_url, MODERN)["error"]
    assert unknown["code"] == other["code"] == -32602
    assert other["message"].replace(task_id, "ID") == unknown["message"].replace("job_nowhere0000000", "ID")
    assert "error" in answer("tasks/cancel", {"taskId": task_id}, theirs, in_process_url, MODERN)

    refused = answer("tasks/update", {"taskId": task_id, "inputResponses": {}}, mine, in_process_url, MODERN)[
        "error"
    ]
    assert refused["code"] == -32602 and "input" in refused["message"]

    assert (
        answer("tasks/cancel", {"taskId": task_id}, mine, in_process_url, MODERN)["result"]["resultType"]
        == "complete"
    )
    again = answer("tasks/get", {"taskId": task_id}, mine, in_process_url, MODERN)["result"]
    assert again["status"] == "cancelled" and again["resultType"] == "complete"
    assert IngestJob.objects.get(uid=task_id).status == IngestJob.Status.CANCELLED
    # The upload was never run: the worker finds nothing queued.
    assert upload_jobs.run_upload(task_id) == {"job_id": task_id, "skipped": "not queued"}
    assert not Item.objects.filter(title="Tides").exists()

    # Without the extension (or on 2025-11-25) the upload is queued as before.
    legacy = sse_payload(post(in_process_url, rpc("tools/call", upload), mine))["result"]
    assert legacy["structuredContent"]["status"] == "queued" and "taskId" not in legacy


class _SlowEmbedder(StandInEmbedder):
    """The stand-in model, a tenth of a second a call; the first call asks the job to stop."""

    def __init__(self, job_uid: str) -> None:
        super().__init__()
        self.job_uid = job_uid
        self.calls = 0

    def embed_batch(self, texts: Any) -> list[list[float]]:
        self.calls += 1
        if self.calls == 1:
            job_watch.cancel(self.job_uid)
        time.sleep(0.1)
        return super().embed_batch(texts)


def test_a_cancel_while_embedding_stops_there_and_keeps_nothing(
    corpus: tuple[Any, Collection], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, collection = corpus
    job = tasks.enqueue_upload(
        collection=collection, title="Long manual", content=manual(40, 3), mime_type="application/pdf"
    )
    slow = _SlowEmbedder(job.uid)
    monkeypatch.setattr(job_watch, "WATCH_SECONDS", 0.01)
    monkeypatch.setattr(upload_jobs, "get_embedder", lambda: slow)
    monkeypatch.setattr("mnemosyne.ingestion.pipeline.EMBED_SLICE", 8)

    assert upload_jobs.run_upload(job.uid) == {"job_id": job.uid, "status": "cancelled"}
    job.refresh_from_db()
    assert job.status == IngestJob.Status.CANCELLED and job.progress == "cancelled"
    # Stopped after a slice or two of many, and the item it had begun is gone.
    assert 1 <= slow.calls < 5
    assert not Item.objects.filter(title="Long manual").exists()


def test_a_2025_client_follows_an_upload_as_a_task_of_that_revision(
    in_process_url: str, corpus: tuple[Any, Collection]
) -> None:
    _, collection = corpus
    owner = User.objects.create(username="owner")
    _, mine = create_token(user=owner, name="mine", scopes=["read", "write"])
    _, theirs = create_token(user=owner, name="theirs", scopes=["read", "write"])
    hello = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    initialized = answer("initialize", hello, mine, in_process_url)["result"]
    assert initialized["protocolVersion"] == LEGACY
    assert initialized["capabilities"]["tasks"] == {
        "list": {},
        "cancel": {},
        "requests": {"tools": {"call": {}}},
    }
    tools = {tool["name"]: tool for tool in answer("tools/list", {}, mine, in_process_url)["result"]["tools"]}
    assert tools["upsert_item"]["execution"] == {"taskSupport": "optional"}
    assert "execution" not in tools["search"]

    arguments: dict[str, Any] = {
        "collection_uid": collection.uid,
        "title": "Tides",
        "text": "# Tides\n\nHigh water.",
    }
    upload: dict[str, Any] = {"name": "upsert_item", "arguments": arguments, "task": {"ttl": 60000}}
    created = answer("tools/call", upload, mine, in_process_url)["result"]
    task = created["task"]
    assert set(created) == {"task"} and task["status"] == "working" and task["ttl"] is None
    assert task["statusMessage"] == "waiting for a worker" and task["pollInterval"] == 1000
    task_id = task["taskId"]
    assert IngestJob.objects.get(uid=task_id).status == IngestJob.Status.QUEUED

    got = answer("tasks/get", {"taskId": task_id}, mine, in_process_url)["result"]
    assert got["taskId"] == task_id and got["status"] == "working"
    listed = answer("tasks/list", {}, mine, in_process_url)["result"]
    assert [found["taskId"] for found in listed["tasks"]] == [task_id] and "nextCursor" not in listed
    assert answer("tasks/list", {}, theirs, in_process_url)["result"]["tasks"] == []
    other = answer("tasks/get", {"taskId": task_id}, theirs, in_process_url)["error"]
    unknown = answer("tasks/result", {"taskId": "job_nowhere0000000"}, mine, in_process_url)["error"]
    assert other["code"] == unknown["code"] == -32602
    assert other["message"].replace(task_id, "ID") == unknown["message"].replace("job_nowhere0000000", "ID")

    # The worker ingests it; tasks/result then answers what upsert_item would have.
    assert upload_jobs.run_upload(task_id)["status"] == "complete"
    done = answer("tasks/get", {"taskId": task_id}, mine, in_process_url)["result"]
    assert done["status"] == "completed"
    result = answer("tasks/result", {"taskId": task_id}, mine, in_process_url)["result"]
    assert result["structuredContent"]["status"] == "created" and result["isError"] is False
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    assert Item.objects.get(uid=result["structuredContent"]["item_uid"]).title == "Tides"
    ended = answer("tasks/cancel", {"taskId": task_id}, mine, in_process_url)["error"]
    assert ended["code"] == -32602 and "completed" in ended["message"]

    # A second one cancelled while queued: tasks/result says so, and nothing is ingested.
    second = answer(
        "tools/call", {**upload, "arguments": {**upload["arguments"], "title": "Ebb"}}, mine, in_process_url
    )
    second_id = second["result"]["task"]["taskId"]
    cancelled = answer("tasks/cancel", {"taskId": second_id}, mine, in_process_url)["result"]
    assert cancelled["status"] == "cancelled" and cancelled["taskId"] == second_id
    refused = answer("tasks/result", {"taskId": second_id}, mine, in_process_url)["error"]
    assert refused["code"] == -32602 and "cancelled" in refused["message"]
    assert not Item.objects.filter(title="Ebb").exists()

    # A tool that does not run as a task says so; background: false contradicts a task.
    search = answer(
        "tools/call", {"name": "search", "arguments": {"query": "tides"}, "task": {}}, mine, in_process_url
    )
    assert search["error"]["code"] == -32601 and "task" in search["error"]["message"]
    forced = {**upload, "arguments": {**upload["arguments"], "background": False}}
    assert answer("tools/call", forced, mine, in_process_url)["error"]["code"] == -32602
    # Without `task` the call is answered as before.
    plain = answer("tools/call", {key: upload[key] for key in ("name", "arguments")}, mine, in_process_url)
    assert plain["result"]["structuredContent"]["status"] == "unchanged"


def test_every_status_of_the_work_a_task_follows_is_a_task_status() -> None:
    every = set(IngestJob.Status.values) | set(RunStatus.values) | set(ReembedJob.Status.values)
    assert every == set(task_jobs.STATUS)
