"""Fault injection beyond the database: the S3 server refusing connections (moto's server, stopped
and started again on its port) and a reranker that accepts connections and never answers.

Each call gets an answer that says what is unavailable, in time; nothing half-written is left;
the server recovers by itself; the log says it once per outage.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from moto.server import ThreadedMotoServer

from access.services import create_token
from mnemosyne.library.models import Collection, Item, Library
from tests.conftest import ingest_fixture_docs
from tests.mcp_server.clients import post, rpc, sse_payload
from tests.servers import FAKE_AWS_ENV, create_bucket, free_port, uvicorn_server

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def call(base: str, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return sse_payload(post(base, rpc("tools/call", {"name": tool, "arguments": arguments}), token))["result"]


def text_of(result: dict[str, Any]) -> str:
    return " ".join(part.get("text", "") for part in result.get("content", []))


class MotoOnPort:
    """moto's S3 server on one port, which can be stopped (connections refused) and started again;
    its objects live in this process, so they are still there after a restart."""

    def __init__(self) -> None:
        self.port = free_port()
        self._server: ThreadedMotoServer | None = None

    def start(self) -> None:
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", self.port)) != 0, "the port no longer answers"


@pytest.fixture
def moto() -> Iterator[MotoOnPort]:
    server = MotoOnPort()
    server.start()
    create_bucket(f"http://127.0.0.1:{server.port}", "faults")
    yield server
    server.stop()


def test_s3_refusing_connections_is_reported_and_recovered_from(tmp_path: Path, moto: MotoOnPort) -> None:
    env = {
        **FAKE_AWS_ENV,
        "CHUNK_STORE": "s3",
        "S3_BUCKET": "faults",
        "S3_ENDPOINT_URL": f"http://127.0.0.1:{moto.port}",
        "TUNING": "s3_max_attempts=1",
        "S3_CONNECT_TIMEOUT": "1",
        "LOG_LEVEL": "warning",
    }
    collection = Collection.objects.create(library=Library.objects.create(name="Faults"), name="s3")
    _, token = create_token(user=User.objects.create(username="s3ops"), name="t", scopes=["read", "write"])
    note = {"collection_uid": collection.uid, "title": "Tides", "text": "# Tides\n\nHigh water at 06:12."}
    with uvicorn_server(tmp_path, env=env, log_name="s3-faults") as base:
        created = call(base, token, "upsert_item", {**note, "external_id": "tides"})
        assert created["isError"] is False, text_of(created)
        item = Item.objects.get(uid=created["structuredContent"]["item_uid"])
        chunk = item.chunks.order_by("ordinal").first()
        assert chunk is not None
        assert call(base, token, "get_chunk", {"chunk_uid": chunk.uid})["isError"] is False

        moto.stop()
        started = time.monotonic()
        answers = [call(base, token, "get_chunk", {"chunk_uid": chunk.uid}) for _ in range(5)]
        refused_write = call(base, token, "upsert_item", {**note, "title": "Other", "external_id": "other"})
        assert time.monotonic() - started < 30
        for answer in [*answers, refused_write]:
            assert answer["isError"] is True
            assert "the chunk store is unavailable right now" in text_of(answer), text_of(answer)
        # Nothing half-written: the new item is not there, the old one is still complete.
        assert not Item.objects.filter(collection=collection, source="external:other").exists()
        item.refresh_from_db()
        assert item.embedding_status == "complete"

        moto.start()
        recovered = call(base, token, "get_chunk", {"chunk_uid": chunk.uid})
        assert recovered["isError"] is False, text_of(recovered)
        log = next(tmp_path.glob("s3-faults-*.log")).read_text()
    assert "Traceback" not in log
    assert log.count("the chunk store is unavailable:") == 1, log[-2000:]
    assert log.count("the chunk store is available again") == 1, log[-2000:]


@pytest.fixture
def hanging_server() -> Iterator[str]:
    """Accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
                held.append(connection)
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join(timeout=5)
    for connection in held:
        connection.close()
    listener.close()


def test_a_reranker_that_hangs_costs_its_timeout_and_the_search_still_answers(
    tmp_path: Path, shared_data_dir: Path, hanging_server: str, embedder: Any
) -> None:
    ingest_fixture_docs(embedder)
    _, token = create_token(user=User.objects.create(username="ranker"), name="r")
    env = {"RERANK_URL": f"{hanging_server}/rerank", "RERANK_TIMEOUT": "1", "LOG_LEVEL": "warning"}
    with uvicorn_server(shared_data_dir, env=env, log_name="rerank-faults") as base:
        timings, notes = [], []
        for _ in range(3):
            started = time.monotonic()
            result = call(base, token, "search", {"query": "backup and restore", "rerank": True})
            timings.append(time.monotonic() - started)
            assert result["isError"] is False
            answer = result["structuredContent"]
            assert answer["results"], "the fused results are answered"
            notes.append(answer["rerank"]["note"])
            assert answer["rerank"]["applied"] is False
        log = next(shared_data_dir.glob("rerank-faults-*.log")).read_text()
    assert all(timing < 6 for timing in timings), timings
    assert all("rerank failed" in note and "fused order" in note for note in notes), notes
    assert log.count("the reranker is unavailable:") == 1, log[-2000:]
    assert "Traceback" not in log
