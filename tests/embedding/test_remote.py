"""Embeddings from an OpenAI-compatible endpoint (a local server over HTTP): the model's own
dimension, input order kept, clear errors, and a library that records the model that embedded it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.db import connection

from mnemosyne.embedding import Embedder, EmbeddingError
from mnemosyne.embedding.remote import RemoteEmbedder
from mnemosyne.embedding.sentence_transformer import bundled_model_dir
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.models import Chunk, Library
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.library.vector_models import ModelMismatch
from mnemosyne.search.service import SearchRequest, search
from tests.embedding.embeddings_server import DIMENSIONS, EmbeddingsServer, embeddings_server, fake_vector
from tests.mcp_server.clients import post, rpc, sse_payload
from tests.servers import uvicorn_server

pytestmark = pytest.mark.slow  # starts processes

KEY = "sk-test-never-in-messages"


@pytest.fixture
def fake() -> Iterator[EmbeddingsServer]:
    with embeddings_server() as server:
        yield server


def remote(server: EmbeddingsServer, model: str = "hash-64", **options: Any) -> RemoteEmbedder:
    return RemoteEmbedder(
        server.base,
        model=model,
        api_key=KEY,
        tokenizer_file=bundled_model_dir() / "tokenizer.json",
        **{"batch_size": 3, **options},
    )


def ingested(model: Embedder, docs: Path, library_name: str, **more: str) -> Library:
    """A new library with a collection "d" of tides.md (and `more`: name → text), ingested by `model`."""
    docs.mkdir()
    texts = {"tides": "The spring tide floods the lower quay twice a month.", **more}
    for name, text in texts.items():
        (docs / f"{name}.md").write_text(f"# {name.title()}\n\n{text}\n")
    library = ensure_library(name=library_name)
    ingest_paths(
        [docs], collection=ensure_collection(library=library, name="d"), report=print, embedder=model
    )
    return library


def test_vectors_come_back_in_input_order_normalised_with_the_models_dimension(
    fake: EmbeddingsServer,
) -> None:
    embedder = remote(fake)
    assert embedder.dim == DIMENSIONS
    texts = [f"text number {n} about tides" for n in range(7)]
    vectors = np.asarray(embedder.embed_batch(texts))
    assert vectors.shape == (7, DIMENSIONS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    for text, vector in zip(texts, vectors, strict=True):
        expected = np.asarray(fake_vector(text))
        assert float(vector @ (expected / np.linalg.norm(expected))) == pytest.approx(1.0)
    # The probe at start, then batches of 3: 3 + 3 + 1.
    assert [len(request["input"]) for request in fake.requests] == [1, 3, 3, 1]
    assert {request["model"] for request in fake.requests} == {"hash-64"}
    assert set(fake.authorizations) == {f"Bearer {KEY}"}
    query = embedder.embed_query("tides")
    assert len(query) == DIMENSIONS and embedder.count_tokens("tides and currents") == 3


@pytest.mark.parametrize(
    ("model", "options", "message"),
    [
        ("error-500", {}, "answered HTTP 500: boom Bearer"),
        ("stall", {"timeout": 0.5}, "did not answer in time"),
        ("wrong-shape", {}, "other than OpenAI's embeddings format"),
        ("short", {}, "returned 2 vectors for 3 texts"),
    ],
)
def test_a_failing_endpoint_is_an_embedding_error_that_hides_the_key(
    fake: EmbeddingsServer, model: str, options: dict[str, Any], message: str
) -> None:
    embedder = remote(fake)
    embedder._model = model
    for option, value in options.items():
        embedder._client.timeout = value if option == "timeout" else embedder._client.timeout
    with pytest.raises(EmbeddingError) as raised:
        embedder.embed_batch(["one", "two", "three"])
    assert message.split(": boom")[0] in str(raised.value)
    assert fake.base.removesuffix("/v1") in str(raised.value)


def test_an_endpoint_that_is_down_is_named_when_first_needed() -> None:
    with embeddings_server() as gone:
        base = gone.base
    embedder = RemoteEmbedder(base, model="hash-64", tokenizer_file=bundled_model_dir() / "tokenizer.json")
    with pytest.raises(
        EmbeddingError, match=r"embeddings endpoint http://127\.0\.0\.1:\d+/v1/embeddings could not be"
    ):
        _ = embedder.dim
    with pytest.raises(EmbeddingError, match="could not be reached"):
        embedder.embed_query("tides")


@pytest.mark.django_db(transaction=True)
def test_a_library_records_its_model_and_is_searched_with_it_only(
    fake: EmbeddingsServer, embedder: Embedder, tmp_path: Path
) -> None:
    model = remote(fake)
    docs = tmp_path / "docs"
    library = ingested(model, docs, "Remote model", glaciers="Ice carves the valley over thousands of years.")
    library.refresh_from_db()
    assert (library.embedding_model, library.embedding_dimensions) == (model.model_id, DIMENSIONS)
    assert KEY not in library.embedding_model
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_indexes WHERE indexname = 'chunk_embedding_hnsw_64'")
        assert cursor.fetchone() == (1,)

    hits = search(
        SearchRequest(query="spring tide quay", library_uid=library.uid, limit=2), embedder=model
    ).hits
    assert hits[0].chunk.item.title == "Tides"
    assert "vector" in hits[0].legs

    # The bundled model cannot search it by vector, nor write into it: both say why.
    with pytest.raises(ModelMismatch, match="holds vectors of the model 'hash-64 at http"):
        search(SearchRequest(query="spring tide", library_uid=library.uid), embedder=embedder)
    with pytest.raises(ModelMismatch, match="library 'Remote model' holds vectors"):
        search(SearchRequest(query="spring tide"), embedder=embedder)  # every library, this one among them
    with pytest.raises(ModelMismatch, match=r"manage\.py reembed"):
        ingest_paths([docs], collection=library.collections.get(), report=print, embedder=embedder)
    keyword = SearchRequest(query="spring tide", library_uid=library.uid, search_types=["fulltext"])
    assert search(keyword, embedder=embedder).hits[0].chunk.item.title == "Tides"
    assert Chunk.objects.filter(library=library).count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_server_on_a_remote_model_ingests_and_searches_over_mcp(
    fake: EmbeddingsServer, shared_data_dir: Path
) -> None:
    env = {
        "MCP_REQUIRE_AUTH": "false",
        "EMBEDDING_URL": fake.base,
        "EMBEDDING_MODEL": "hash-64",
        "EMBEDDING_API_KEY": KEY,
    }
    collection = ensure_collection(library=ensure_library(name="Remote over MCP"), name="notes")
    with uvicorn_server(shared_data_dir, env=env, log_name="remote-embeddings") as base:
        call = {
            "name": "upsert_item",
            "arguments": {
                "collection_uid": collection.uid,
                "title": "Harbour",
                "text": "The pilot boat meets every ship at the harbour mouth.",
            },
        }
        written = sse_payload(post(base, rpc("tools/call", call)))["result"]
        assert not written.get("isError"), written
        found = post(
            base,
            rpc("tools/call", {"name": "search", "arguments": {"query": "pilot boat harbour", "limit": 3}}),
        )
        result = sse_payload(found)["result"]
        assert not result.get("isError"), json.dumps(result)[:400]
        assert result["structuredContent"]["results"][0]["item"]["title"] == "Harbour"
        config = post(
            base,
            rpc(
                "tools/call",
                {"name": "get_collection_config", "arguments": {"collection_uid": collection.uid}},
            ),
        )
        (described,) = sse_payload(config)["result"]["structuredContent"]["collections"]
        assert described["embedding"]["dimensions"] == DIMENSIONS
        assert described["embedding"]["model"].startswith("hash-64 at http://127.0.0.1:")
    library = Library.objects.get(pk=collection.library_id)
    assert library.embedding_dimensions == DIMENSIONS and library.embedding_model.startswith("hash-64 at ")


@pytest.mark.django_db(transaction=True)
def test_with_the_endpoint_down_a_server_starts_and_searches_by_full_text(
    embedder: Embedder, shared_data_dir: Path, tmp_path: Path
) -> None:
    with embeddings_server() as fake:
        library = ingested(remote(fake), tmp_path / "docs", "Endpoint gone")
        base_url = fake.base
    env = {"MCP_REQUIRE_AUTH": "false", "EMBEDDING_URL": base_url, "EMBEDDING_MODEL": "hash-64"}
    with uvicorn_server(shared_data_dir, env=env, log_name="embeddings-down") as base:
        call = {"name": "search", "arguments": {"query": "spring tide quay", "library_uid": library.uid}}
        result = sse_payload(post(base, rpc("tools/call", call)))["result"]
        assert not result.get("isError"), result
        content = result["structuredContent"]
        assert content["results"][0]["item"]["title"] == "Tides"
        assert content["legs_run"] == ["fulltext"]
        assert "could not be reached" in content["legs_not_run"]["vector"]
        assert KEY not in json.dumps(result)
