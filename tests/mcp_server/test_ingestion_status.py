"""Ingestion visible to agents, over MCP on HTTP: upsert_item queues a document and returns a job id;
get_ingestion_status (and the mnemosyne://ingestion resource) follow it to complete — or to failed,
with the reason — through a real db_worker; a job nobody picks up says so; the library boundary
holds."""

from __future__ import annotations

import base64
import json
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from mcp.types import CallToolResult, TextResourceContents

from access.services import create_token
from mnemosyne.library.models import EmbeddingStatus, IngestJob, Item
from mnemosyne.library.services import ensure_collection, ensure_library
from tests.mcp_server.clients import call_all, mcp_session, run
from tests.servers import db_worker

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def setup() -> dict[str, Any]:
    inbox = ensure_collection(library=ensure_library(name="Notes"), name="inbox")
    other = ensure_collection(library=ensure_library(name="Private"), name="vault")
    owner = User.objects.create(username="writer")
    _, token = create_token(user=owner, name="w", scopes=["read", "write"])
    _, confined = create_token(user=owner, name="c", scopes=["read", "write"], libraries=[other.library])
    return {"inbox": inbox, "other": other, "token": token, "confined": confined}


def structured(result: Any) -> dict[str, Any]:
    assert isinstance(result, CallToolResult) and not result.is_error, result
    assert result.structured_content is not None
    return result.structured_content


def status(base: str, token: str, **arguments: Any) -> dict[str, Any]:
    (result,) = call_all(base, token, [("get_ingestion_status", arguments)])
    return structured(result)


def wait_for_job(
    base: str, token: str, job_id: str, *, done: tuple[str, ...] = ("complete", "failed")
) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while True:
        (job,) = status(base, token, job_id=job_id)["jobs"]
        if job["status"] in done:
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.3)


def test_a_queued_upload_is_followed_to_complete_and_to_failed(
    live_server_url: str, shared_data_dir: Path, setup: dict[str, Any]
) -> None:
    base, token, inbox = live_server_url, setup["token"], setup["inbox"]
    good, broken = call_all(
        base,
        token,
        [
            (
                "upsert_item",
                {
                    "collection_uid": inbox.uid,
                    "title": "Harbour log",
                    "background": True,
                    "text": "# Harbour log\n\nThe pilot boat leaves at dawn when the tide turns.\n",
                },
            ),
            (
                "upsert_item",
                {
                    "collection_uid": inbox.uid,
                    "title": "Scan",
                    "background": True,
                    "mime_type": "application/pdf",
                    "content_base64": base64.b64encode(b"%PDF-1.7 this is not a pdf").decode(),
                },
            ),
        ],
    )
    queued = structured(good)
    assert queued["status"] == "queued" and queued["item_uid"] is None and queued["job_id"].startswith("job_")
    assert queued["embedding_status"] == "pending"
    (job,) = status(base, token, job_id=queued["job_id"])["jobs"]
    assert job["status"] == "queued" and job["note"] == ""
    with db_worker(shared_data_dir):
        finished = wait_for_job(base, token, queued["job_id"])
        failed = wait_for_job(base, token, structured(broken)["job_id"])
    assert finished["status"] == "complete" and finished["outcome"] == "created", finished
    item = Item.objects.get(uid=finished["item_uid"])
    assert item.embedding_status == EmbeddingStatus.COMPLETE and item.chunk_count == 1
    (search,) = call_all(base, token, [("search", {"query": "when does the pilot boat leave", "limit": 1})])
    assert structured(search)["results"][0]["item"]["uid"] == item.uid
    assert failed["status"] == "failed" and "cannot ingest the content" in failed["error"]
    assert failed["item_uid"] is None
    assert IngestJob.objects.get(uid=failed["job_id"]).content == b""  # nothing kept once done


def test_status_lists_failed_items_with_their_reason_and_counts(
    in_process_url: str, setup: dict[str, Any]
) -> None:
    inbox = setup["inbox"]
    Item.objects.create(
        collection=inbox,
        source="a.pdf",
        title="A",
        item_type="pdf",
        embedding_status=EmbeddingStatus.FAILED,
        embedding_error="encrypted PDF",
    )
    Item.objects.create(
        collection=inbox,
        source="b.md",
        title="B",
        item_type="markdown",
        embedding_status=EmbeddingStatus.COMPLETE,
        chunk_count=3,
    )
    report = status(in_process_url, setup["token"], collection_uid=inbox.uid)
    assert report["counts"] == {"pending": 0, "processing": 0, "complete": 1, "failed": 1}
    assert [(i["title"], i["status"], i["error"]) for i in report["items"]] == [
        ("A", "failed", "encrypted PDF")
    ]
    complete = status(in_process_url, setup["token"], collection_uid=inbox.uid, status="complete")
    assert [i["title"] for i in complete["items"]] == ["B"]

    async def read() -> str:
        async with mcp_session(in_process_url, setup["token"], "streamable-http") as session:
            contents = (await session.read_resource("mnemosyne://ingestion")).contents[0]
            assert isinstance(contents, TextResourceContents)
            return contents.text

    resource = json.loads(run(read))
    assert resource["counts"]["failed"] == 1 and resource["items"][0]["error"] == "encrypted PDF"


def test_a_job_no_worker_takes_says_so(in_process_url: str, setup: dict[str, Any]) -> None:
    job = IngestJob.objects.create(
        collection=setup["inbox"], title="Stuck", mime_type="text/markdown", content=b"x"
    )
    IngestJob.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    (reported,) = status(in_process_url, setup["token"], job_id=job.uid)["jobs"]
    assert reported["status"] == "queued" and "no background worker" in reported["note"]


def test_the_library_boundary_holds(in_process_url: str, setup: dict[str, Any]) -> None:
    job = IngestJob.objects.create(collection=setup["inbox"], title="Theirs", mime_type="text/markdown")
    (result,) = call_all(in_process_url, setup["confined"], [("get_ingestion_status", {"job_id": job.uid})])
    assert isinstance(result, CallToolResult) and result.is_error
    assert "no job with uid" in result.content[0].text  # type: ignore[union-attr]
    assert status(in_process_url, setup["confined"])["jobs"] == []


def test_a_queued_upload_is_refused_at_once_for_what_can_be_told(
    in_process_url: str, setup: dict[str, Any]
) -> None:
    (result,) = call_all(
        in_process_url,
        setup["token"],
        [
            (
                "upsert_item",
                {
                    "collection_uid": setup["inbox"].uid,
                    "title": "X",
                    "background": True,
                    "mime_type": "application/x-unknown",
                    "content_base64": "AAAA",
                },
            )
        ],
    )
    assert isinstance(result, CallToolResult) and result.is_error
    assert "unsupported mime_type" in result.content[0].text  # type: ignore[union-attr]
    assert not IngestJob.objects.exists()
