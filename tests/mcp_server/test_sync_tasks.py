"""A source's sync asked for over MCP (`sync_source`), as a job a background worker runs
(ingestion/sync_jobs.py) and as a task of either revision (mcp_server/task_jobs.py): queued at
once, followed to what it did, cancelled while queued or while it runs (what it finished is kept,
nothing is half-written), and only for a caller that may change the source's library."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from access.services import create_token
from mnemosyne.ingestion import job_watch, sync_jobs
from mnemosyne.lib import cancellation
from mnemosyne.library.models import Chunk, EmbeddingStatus, IngestJob, Item, Source
from mnemosyne.library.services import ensure_collection, ensure_library
from tests.mcp_server.clients import MODERN
from tests.mcp_server.clients import answer as call
from tests.stand_in_embedder import StandInEmbedder

pytestmark = pytest.mark.django_db(transaction=True)


def folder(root: Path, count: int, lines_each: int = 40) -> Path:
    root.mkdir()
    for number in range(count):
        lines = "\n".join(
            f"Berth {number}.{line}: the pilot boards at the outer buoy." for line in range(lines_each)
        )
        (root / f"berth-{number}.md").write_text(f"# Berth {number}\n\n{lines}\n")
    return root


@pytest.fixture
def source(tmp_path: Path) -> Source:
    collection = ensure_collection(library=ensure_library(name="Harbour"), name="berths")
    return Source.objects.create(
        collection=collection, kind="directory", location=str(folder(tmp_path / "berths", 3))
    )


def _sync(name: str = "sync_source", **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def test_a_sync_asked_for_is_a_task_of_either_revision_and_ends_with_what_it_did(
    in_process_url: str, source: Source
) -> None:
    owner = User.objects.create(username="owner")
    _, token = create_token(user=owner, name="write", scopes=["read", "write"])

    # 2025-11-25: sync_source is marked as a task tool, and asked for as one answers a task.
    tools = call("tools/list", {}, token, in_process_url)["result"]["tools"]
    assert {tool["name"]: tool.get("execution") for tool in tools}["sync_source"] == {
        "taskSupport": "optional"
    }
    created = call("tools/call", {**_sync(source_uid=source.uid), "task": {}}, token, in_process_url)
    task_id = created["result"]["task"]["taskId"]
    job = IngestJob.objects.get(uid=task_id)
    assert job.kind == IngestJob.Kind.SYNC and job.source == source and job.status == IngestJob.Status.QUEUED

    assert sync_jobs.run_sync(task_id)["status"] == "complete"
    result = call("tasks/result", {"taskId": task_id}, token, in_process_url)["result"]
    done = result["structuredContent"]
    assert done["status"] == "complete" and done["source_uid"] == source.uid and done["name"] == "berths"
    assert done["counts"]["created"] == 3 and done["counts"]["failed"] == 0
    assert "Synced berths" in result["content"][0]["text"]
    assert Item.objects.filter(collection=source.collection).count() == 3

    # 2026-07-28, with the Tasks extension: the same, as that revision's task.
    again = call("tools/call", _sync(source_uid=source.uid), token, in_process_url, MODERN)["result"]
    assert again["resultType"] == "task" and again["status"] == "working"
    sync_jobs.run_sync(again["taskId"])
    ended = call("tasks/get", {"taskId": again["taskId"]}, token, in_process_url, MODERN)["result"]
    assert ended["status"] == "completed"
    assert ended["result"]["structuredContent"]["counts"]["unchanged"] == 3

    # Without tasks: the job id, which get_ingestion_status follows to the sync's counts.
    plain = call("tools/call", _sync(source_uid=source.uid), token, in_process_url)["result"][
        "structuredContent"
    ]
    assert plain["status"] == "queued" and plain["counts"] is None
    sync_jobs.run_sync(plain["job_id"])
    status = call("tools/call", _sync("get_ingestion_status", job_id=plain["job_id"]), token, in_process_url)
    (shown,) = status["result"]["structuredContent"]["jobs"]
    assert shown["kind"] == "sync" and shown["source_uid"] == source.uid and shown["status"] == "complete"
    assert shown["counts"]["unchanged"] == 3 and shown["size"] == 0


def test_only_a_caller_that_may_change_the_library_syncs_its_source(
    in_process_url: str, source: Source
) -> None:
    owner = User.objects.create(username="owner")
    _, reader = create_token(user=owner, name="read", scopes=["read"])
    elsewhere = ensure_library(name="Elsewhere")
    _, confined = create_token(user=owner, name="other", scopes=["read", "write"], libraries=[elsewhere])

    refused = call("tools/call", _sync(source_uid=source.uid), reader, in_process_url)
    assert "error" in refused or refused["result"]["isError"]
    hidden = call("tools/call", _sync(source_uid=source.uid), confined, in_process_url)["result"]
    unknown = call("tools/call", _sync(source_uid="src_nowhere0000000"), confined, in_process_url)["result"]
    assert hidden["isError"] and unknown["isError"]
    texts = [answer["content"][0]["text"] for answer in (hidden, unknown)]
    assert texts[0].replace(source.uid, "UID") == texts[1].replace("src_nowhere0000000", "UID")
    assert not IngestJob.objects.exists()


class _SlowEmbedder(StandInEmbedder):
    """The stand-in model, 20 ms a call; the `at`-th call asks the job to stop, and waits until the
    job's watcher has passed the word on."""

    def __init__(self, job_uid: str, at: int) -> None:
        super().__init__()
        self.job_uid, self.at, self.calls = job_uid, at, 0

    def embed_batch(self, texts: Any) -> list[list[float]]:
        self.calls += 1
        if self.calls == self.at:
            job_watch.cancel(self.job_uid)
            # Until the job's watcher has seen it (the call's token rides into this thread).
            token = cancellation.current()
            deadline = time.monotonic() + 30
            while token is not None and not token.cancelled and time.monotonic() < deadline:
                time.sleep(0.01)
        time.sleep(0.02)
        return super().embed_batch(texts)


def test_a_sync_cancelled_while_it_runs_stops_and_leaves_nothing_half_written(
    in_process_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    collection = ensure_collection(library=ensure_library(name="Harbour"), name="berths")
    source = Source.objects.create(
        collection=collection, kind="directory", location=str(folder(tmp_path / "many", 12, 600))
    )
    owner = User.objects.create(username="owner")
    _, token = create_token(user=owner, name="write", scopes=["read", "write"])
    queued = call("tools/call", {**_sync(source_uid=source.uid), "task": {}}, token, in_process_url)
    task_id = queued["result"]["task"]["taskId"]
    slow = _SlowEmbedder(task_id, at=12)
    monkeypatch.setattr(job_watch, "WATCH_SECONDS", 0.01)
    monkeypatch.setattr("mnemosyne.ingestion.sync.runs.get_embedder", lambda: slow)
    monkeypatch.setattr("mnemosyne.ingestion.pipeline.EMBED_SLICE", 16)

    assert sync_jobs.run_sync(task_id) == {"job_id": task_id, "status": "cancelled"}
    job = IngestJob.objects.get(uid=task_id)
    assert job.status == IngestJob.Status.CANCELLED and "kept" in job.error
    source.refresh_from_db()
    assert source.last_status == "cancelled"
    # Stopped early; whatever it kept is whole: complete items with all their chunks.
    kept = list(Item.objects.filter(collection=collection))
    assert 0 < len(kept) < 12
    for item in kept:
        assert item.embedding_status == EmbeddingStatus.COMPLETE
        assert Chunk.objects.filter(item=item).count() == item.chunk_count > 0
    answer = call("tasks/get", {"taskId": task_id}, token, in_process_url)["result"]
    assert answer["status"] == "cancelled"

    # A queued sync cancelled never runs; the next sync reads the rest.
    second = call("tools/call", {**_sync(source_uid=source.uid), "task": {}}, token, in_process_url)
    second_id = second["result"]["task"]["taskId"]
    assert (
        call("tasks/cancel", {"taskId": second_id}, token, in_process_url)["result"]["status"] == "cancelled"
    )
    assert sync_jobs.run_sync(second_id) == {"job_id": second_id, "skipped": "not queued"}
    monkeypatch.setattr("mnemosyne.ingestion.sync.runs.get_embedder", StandInEmbedder)
    third = call("tools/call", _sync(source_uid=source.uid), token, in_process_url)["result"][
        "structuredContent"
    ]
    assert sync_jobs.run_sync(third["job_id"])["status"] == "complete"
    assert Item.objects.filter(collection=collection, embedding_status=EmbeddingStatus.COMPLETE).count() == 12
