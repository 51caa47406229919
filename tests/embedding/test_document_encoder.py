"""Ingest batches on ONNX Runtime with int8 weights: close to torch's vectors, quantized once, and
torch again when the quantized graph cannot be used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pytest_django.fixtures import Settings

from mnemosyne.embedding import int8_graph, query_encoder
from mnemosyne.embedding.sentence_transformer import (
    BUNDLED_MODEL_SHA256,
    SentenceTransformerEmbedder,
    bundled_model_dir,
)

pytestmark = pytest.mark.slow

TEXTS = [
    "The spring tide floods the lower quay twice a month.",
    "glacier",
    "Antiretroviral therapy reduces rates of tuberculosis across a broad range of CD4 strata. " * 6,
    "Ünïcode, 漢字 and emoji 🙂 in one passage",
    "word " * 400,  # beyond the model's window: truncated like the torch path
] * 5


def bundled_embedder(
    cache_dir: Path, settings: Settings, *, query_backend: str = "torch", document_backend: str = "torch"
) -> SentenceTransformerEmbedder:
    """The bundled model with its exports in `cache_dir`, on the given query and document backends."""
    settings.EMBEDDING_CACHE_DIR = cache_dir
    return SentenceTransformerEmbedder(
        bundled_model_dir(),
        model_id="all-MiniLM-L6-v2",
        weights_sha256=BUNDLED_MODEL_SHA256,
        query_backend=query_backend,
        document_backend=document_backend,
    )


def int8_embedder(cache_dir: Path, settings: Settings) -> SentenceTransformerEmbedder:
    return bundled_embedder(cache_dir, settings, document_backend="onnx-int8")


def put_unreadable_int8_graph(cache_dir: Path) -> None:
    """A float graph present (so not exported again) and an int8 graph ONNX Runtime cannot read."""
    source = query_encoder.export_path(cache_dir, "all-MiniLM-L6-v2", BUNDLED_MODEL_SHA256)
    source.write_bytes(b"")
    int8_graph.quantized_path(source).write_bytes(b"not an onnx graph")


def test_batches_on_int8_are_close_to_torch_and_keep_their_order(
    torch_model: Any, settings: Settings, tmp_path: Path
) -> None:
    fast = int8_embedder(tmp_path, settings)
    assert fast.document_backend == "onnx-int8"
    got = np.asarray(fast.embed_batch(TEXTS))
    reference = torch_model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    assert got.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = (got * reference).sum(axis=1)
    # In the input's order (batches run sorted by length, on several sessions at once).
    assert cosines.min() > 0.97 and cosines.mean() > 0.98
    assert np.allclose(got[0], got[5], atol=1e-6), "the same text gives the same vector"


@pytest.mark.parametrize("backend", ["onnx-int8", "torch"])
def test_a_text_gets_the_same_vector_bit_for_bit_whatever_it_is_embedded_with(
    embedder: SentenceTransformerEmbedder, settings: Settings, tmp_path: Path, backend: str
) -> None:
    model = bundled_embedder(tmp_path, settings, document_backend=backend)
    assert model.document_backend == backend
    text = TEXTS[1]
    alone = np.asarray(model.embed_batch([text])[0], dtype=np.float64).tobytes()
    batches = [
        [text, TEXTS[0], TEXTS[3]],  # beside a longer and a shorter text
        [TEXTS[4], TEXTS[2], text],  # last, beside a text the model cuts at its window
        [*TEXTS[:5], text, *TEXTS[5:9]],  # in the middle of ten
    ]
    for batch in batches:
        vectors = model.embed_batch(batch)
        assert np.asarray(vectors[batch.index(text)], dtype=np.float64).tobytes() == alone


def test_the_quantized_graph_is_made_once(
    embedder: SentenceTransformerEmbedder, settings: Settings, tmp_path: Path
) -> None:
    int8_embedder(tmp_path, settings)
    (quantized,) = tmp_path.glob("*-int8-per-channel-mixed.onnx")
    assert quantized.stat().st_mode & 0o777 == 0o644
    modified = quantized.stat().st_mtime_ns
    int8_embedder(tmp_path, settings)
    assert quantized.stat().st_mtime_ns == modified
    assert not list(tmp_path.glob("*.partial"))


def test_an_unreadable_quantized_graph_leaves_ingest_on_torch(
    torch_model: Any,
    settings: Settings,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    put_unreadable_int8_graph(tmp_path)
    fallback = int8_embedder(tmp_path, settings)
    assert fallback.document_backend == "torch"
    assert "int8 document encoder is unavailable" in caplog.text
    vector = np.asarray(fallback.embed_batch(["still embeds"])[0])
    torch_vector = torch_model.encode(["still embeds"], normalize_embeddings=True, convert_to_numpy=True)[0]
    assert float(vector @ torch_vector) == pytest.approx(1.0, abs=1e-5)


def test_queries_on_the_int8_graph_when_asked_are_close_to_the_float_graph(
    embedder: SentenceTransformerEmbedder, settings: Settings, tmp_path: Path
) -> None:
    float_queries = bundled_embedder(tmp_path, settings, query_backend="onnx")
    int8_queries = bundled_embedder(tmp_path, settings, query_backend="onnx-int8")
    assert (float_queries.query_backend, int8_queries.query_backend) == ("onnx", "onnx-int8")
    # The same quantized graph the document encoder uses, made once beside the float one.
    assert len(list(tmp_path.glob("*-int8-per-channel-mixed.onnx"))) == 1
    for text in TEXTS[:4]:
        exact = np.asarray(float_queries.embed_query(text))
        approximate = np.asarray(int8_queries.embed_query(text))
        assert approximate.shape == (384,)
        assert np.linalg.norm(approximate) == pytest.approx(1.0, abs=1e-5)
        assert 0.97 < float(exact @ approximate) < 1.0 - 1e-6, "close, and not the float graph itself"


def test_an_unreadable_int8_graph_leaves_queries_on_torch(
    embedder: SentenceTransformerEmbedder,
    settings: Settings,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    put_unreadable_int8_graph(tmp_path)
    fallback = bundled_embedder(tmp_path, settings, query_backend="onnx-int8")
    assert fallback.query_backend == "torch"
    assert "int8 query encoder is unavailable" in caplog.text
    assert len(fallback.embed_query("still embeds")) == 384
