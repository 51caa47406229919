"""A library re-embedded with the servers' model over MCP (`reembed_library`), as a job a worker
runs (ingestion/reembed_jobs.py) and a task of either revision: followed to the switch, or
cancelled — queued, or while it stages — with the library keeping its vectors and its model; one
re-embedding of a library at a time; only for a library's managers."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth.models import User

from access.services import create_token
from mnemosyne.embedding import get_embedder
from mnemosyne.ingestion import reembed_jobs, reembedding
from mnemosyne.lib import cancellation
from mnemosyne.library.models import Chunk, Library, ReembedJob
from tests.conftest import ingest_fixture_docs
from tests.mcp_server.clients import MODERN
from tests.mcp_server.clients import answer as call
from tests.stand_in_embedder import StandInEmbedder

pytestmark = pytest.mark.django_db(transaction=True)
OLD = "an-older-model"


def reembed(library: Library) -> dict[str, Any]:
    return {"name": "reembed_library", "arguments": {"library_uid": library.uid}}


@pytest.fixture
def library() -> Library:
    """A library whose vectors are recorded as another model's (embedded before the servers moved)."""
    found, _, _ = ingest_fixture_docs(get_embedder(), library="Moved")
    Library.objects.filter(pk=found.pk).update(embedding_model=OLD)
    found.refresh_from_db()
    return found


@pytest.fixture
def manager() -> str:
    _, token = create_token(
        user=User.objects.create(username="boss", is_superuser=True), name="m", scopes=["read", "write"]
    )
    return token


def test_a_manager_moves_a_library_to_the_servers_model_as_a_task(
    in_process_url: str, library: Library, manager: str
) -> None:
    created = call("tools/call", {**reembed(library), "task": {}}, manager, in_process_url)["result"]["task"]
    job = ReembedJob.objects.get(uid=created["taskId"])
    assert job.status == ReembedJob.Status.QUEUED and job.model_before == OLD
    assert job.model == get_embedder().model_id and created["statusMessage"] == "waiting for a worker"
    # Asked again meanwhile: where it is, no second job.
    again = call("tools/call", reembed(library), manager, in_process_url)["result"]["structuredContent"]
    assert again["job_id"] == job.uid and ReembedJob.objects.count() == 1

    assert reembed_jobs.run_reembed(job.uid)["status"] == "complete"
    result = call("tasks/result", {"taskId": job.uid}, manager, in_process_url)["result"]["structuredContent"]
    chunks = Chunk.objects.filter(library=library).count()
    assert result["status"] == "complete" and result["done"] == chunks and result["model_before"] == OLD
    library.refresh_from_db()
    assert library.embedding_model == get_embedder().model_id
    done = call("tools/call", reembed(library), manager, in_process_url)["result"]["structuredContent"]
    assert done["status"] == "unchanged" and done["job_id"] is None

    # 2026-07-28 with the extension: a task, cancelled while queued; the library keeps its model.
    Library.objects.filter(pk=library.pk).update(embedding_model=OLD)
    second = call("tools/call", reembed(library), manager, in_process_url, MODERN)["result"]
    assert second["resultType"] == "task"
    call("tasks/cancel", {"taskId": second["taskId"]}, manager, in_process_url, MODERN)
    assert (
        call("tasks/get", {"taskId": second["taskId"]}, manager, in_process_url, MODERN)["result"]["status"]
        == "cancelled"
    )
    assert reembed_jobs.run_reembed(second["taskId"])["skipped"] == "not queued"
    library.refresh_from_db()
    assert library.embedding_model == OLD


class _Stopping(StandInEmbedder):
    """The stand-in model, its vectors turned around; its second call asks the job to stop and
    waits until the watcher has passed the word on."""

    def __init__(self, job_uid: str) -> None:
        super().__init__()
        self.job_uid, self.calls = job_uid, 0

    def embed_batch(self, texts: Any) -> list[list[float]]:
        self.calls += 1
        if self.calls == 2:
            reembed_jobs.cancel(self.job_uid)
            token = cancellation.current()
            deadline = time.monotonic() + 30
            while token is not None and not token.cancelled and time.monotonic() < deadline:
                time.sleep(0.01)
        # Other vectors than the library's: a switch would show.
        return [[-value for value in vector] for vector in super().embed_batch(texts)]


def test_a_reembedding_cancelled_while_it_stages_changes_nothing(
    in_process_url: str, library: Library, manager: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = dict(Chunk.objects.filter(library=library).values_list("id", "embedding"))
    job_id = call("tools/call", {**reembed(library), "task": {}}, manager, in_process_url)["result"]["task"][
        "taskId"
    ]
    stopping = _Stopping(job_id)
    stopping.model_id = get_embedder().model_id
    monkeypatch.setattr(reembed_jobs, "get_embedder", lambda: stopping)
    monkeypatch.setattr(reembedding, "BATCH", 2)
    monkeypatch.setattr("mnemosyne.ingestion.job_watch.WATCH_SECONDS", 0.01)

    assert reembed_jobs.run_reembed(job_id) == {"job_id": job_id, "status": "cancelled"}
    assert stopping.calls == 2
    library.refresh_from_db()
    assert library.embedding_model == OLD
    after = dict(Chunk.objects.filter(library=library).values_list("id", "embedding"))
    assert after == before
    task = call("tasks/get", {"taskId": job_id}, manager, in_process_url)["result"]
    assert task["status"] == "cancelled"


def test_only_a_librarys_managers_re_embed_it(in_process_url: str, library: Library) -> None:
    _, editor = create_token(user=User.objects.create(username="clerk"), name="e", scopes=["read", "write"])
    refused = call("tools/call", reembed(library), editor, in_process_url)["result"]
    assert refused["isError"] and "managers" in refused["content"][0]["text"]
    assert not ReembedJob.objects.exists()
