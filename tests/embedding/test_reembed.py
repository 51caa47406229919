"""`manage.py reembed`: a library's vectors rebuilt with another model beside the old ones, then one
switch — searched over HTTP the whole time."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from pytest_django.fixtures import Settings

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion import reembedding
from mnemosyne.library.models import Chunk, Library
from tests.conftest import ingest_fixture_docs
from tests.embedding.embeddings_server import DIMENSIONS, EmbeddingsServer, embeddings_server
from tests.mcp_server.clients import post, rpc, sse_payload
from tests.servers import uvicorn_server

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "how do glaciers carve valleys"


@pytest.fixture
def fake() -> Iterator[EmbeddingsServer]:
    with embeddings_server() as server:
        yield server


def ask(base: str) -> tuple[float, float, str, list[str]]:
    """(when it was asked, when answered, "ok" / the tool error / the HTTP failure, the titles found)."""
    asked = time.monotonic()
    call = {"name": "search", "arguments": {"query": QUESTION, "limit": 3}}
    answer = post(base, rpc("tools/call", call))
    if answer.status_code != 200:
        return asked, time.monotonic(), f"HTTP {answer.status_code}", []
    result = sse_payload(answer)["result"]
    if result.get("isError"):
        return asked, time.monotonic(), result["content"][0]["text"], []
    return (
        asked,
        time.monotonic(),
        "ok",
        [hit["item"]["title"] for hit in result["structuredContent"]["results"]],
    )


def test_searches_keep_the_old_model_until_one_switch(
    embedder: Embedder,
    fake: EmbeddingsServer,
    settings: Settings,
    shared_data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    library, _, _ = ingest_fixture_docs(embedder, library="Re-embedded")
    chunks = Chunk.objects.filter(library=library).count()
    monkeypatch.setattr(reembedding, "BATCH", 2)  # many batches, each 0.2 s at the endpoint
    answers: list[tuple[float, float, str, list[str]]] = []
    stop = threading.Event()
    with uvicorn_server(shared_data_dir, env={"MCP_REQUIRE_AUTH": "false"}, log_name="reembed") as base:
        expected = ask(base)
        assert expected[2] == "ok" and expected[3]

        def searcher() -> None:
            while not stop.is_set():
                answers.append(ask(base))

        thread = threading.Thread(target=searcher)
        thread.start()
        try:
            time.sleep(0.5)
            settings.EMBEDDING_URL = fake.base
            started = time.monotonic()
            out = StringIO()
            call_command("reembed", "--library", library.uid, "--model", "slow-hash-64", stdout=out)
            switched = time.monotonic()
            deadline = switched + 60
            while (
                not [answer for answer in answers if answer[0] > switched + 0.5]
                and time.monotonic() < deadline
            ):
                time.sleep(0.1)
        finally:
            stop.set()
            thread.join(timeout=60)

    during = [answer for answer in answers if started <= answer[0] and answer[1] < switched]
    # Asked after the switch (one asked just before may still have read the old model: a busy
    # machine can take longer to answer it than the switch takes).
    after = [answer for answer in answers if answer[0] > switched]
    assert len(during) >= 3, (switched - started, len(during))
    # Until the switch the library answered with the old model, as it did just before; never a failure.
    before = [answer for answer in answers if answer[1] < started] or [expected]
    assert all(outcome == "ok" and titles == before[-1][3] for _, _, outcome, titles in during), (
        before[-1],
        during[:3],
    )
    assert all(outcome in ("ok",) or "holds vectors of the model" in outcome for _, _, outcome, _ in answers)
    # After it, a server still on the old model says why it cannot search the library by vector.
    assert after and all(
        "holds vectors of the model 'slow-hash-64 at http" in outcome for _, _, outcome, _ in after
    )
    assert f"{chunks} chunks re-embedded" in out.getvalue()

    library.refresh_from_db()
    assert library.embedding_dimensions == DIMENSIONS and library.embedding_model.startswith(
        "slow-hash-64 at "
    )
    vectors = Chunk.objects.filter(library=library).values_list("embedding", flat=True)
    assert None not in vectors and {len(vector) for vector in vectors if vector is not None} == {DIMENSIONS}

    # A server on the new model searches it.
    env = {"MCP_REQUIRE_AUTH": "false", "EMBEDDING_URL": fake.base, "EMBEDDING_MODEL": "slow-hash-64"}
    with uvicorn_server(shared_data_dir, env=env, log_name="reembed-new") as base:
        _, _, outcome, titles = ask(base)
    assert outcome == "ok" and titles


def test_reembed_refuses_what_it_cannot_do(embedder: Embedder, settings: Settings) -> None:
    library, _, _ = ingest_fixture_docs(embedder, library="Already")
    out = StringIO()
    call_command("reembed", "--library", "Already", "--model", "all-MiniLM-L6-v2", stdout=out)
    assert "already embedded with 'all-MiniLM-L6-v2'" in out.getvalue()
    with pytest.raises(CommandError, match="no library with the uid or name 'Nope'"):
        call_command("reembed", "--library", "Nope", "--model", "all-MiniLM-L6-v2")
    with pytest.raises(CommandError, match=r"--model: .*'/not/a/model' is neither"):
        call_command("reembed", "--library", "Already", "--model", "/not/a/model")
    with embeddings_server() as gone:
        settings.EMBEDDING_URL = gone.base
    with pytest.raises(CommandError, match="could not be reached"):
        call_command("reembed", "--library", "Already", "--model", "hash-64")
    assert Library.objects.get(pk=library.pk).embedding_model == "all-MiniLM-L6-v2"
