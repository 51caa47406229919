"""The embedder: pinned weights, and single queries on ONNX Runtime giving the torch model's vectors."""

from __future__ import annotations

import copy
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.conf import settings
from pytest_django.fixtures import Settings

from mnemosyne.embedding import ModelIntegrityError, query_encoder
from mnemosyne.embedding.query_encoder import MAX_PADDING, like_lengths
from mnemosyne.embedding.sentence_transformer import (
    BUNDLED_MODEL_SHA256,
    SentenceTransformerEmbedder,
    bundled_model_dir,
    verify_bundled_weights,
)
from mnemosyne.embedding.word_pieces import WordPieces

pytestmark = pytest.mark.slow

QUERIES = [
    "how do I restore the database from last night's dump?",
    "glacier",
    "Ünïcode, 漢字 and emoji 🙂 in one query",
    "word " * 400,  # beyond the model's window: truncated like the torch path
]


def test_the_bundled_weights_match_the_pinned_digest() -> None:
    verify_bundled_weights(bundled_model_dir())


def test_other_weights_are_refused(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(b"not the model")
    with pytest.raises(ModelIntegrityError, match="does not match the pinned"):
        verify_bundled_weights(tmp_path)
    with pytest.raises(ModelIntegrityError, match="not found"):
        verify_bundled_weights(tmp_path / "missing")


def test_queries_run_on_onnx_and_match_the_torch_vectors(
    embedder: SentenceTransformerEmbedder, torch_model: Any
) -> None:
    assert embedder.query_backend == "onnx"
    for query in QUERIES:
        fast = np.asarray(embedder.embed_query(query))
        # torch's vector (ingest batches may run on the int8 graph: document_encoder.py)
        reference = torch_model.encode([query], normalize_embeddings=True, convert_to_numpy=True)[0]
        assert fast.shape == (384,)
        assert float(np.linalg.norm(fast)) == pytest.approx(1.0, abs=1e-5)
        assert float(fast @ reference) > 0.9999


def built(model: Any, cache_dir: Path, weights_sha256: str = BUNDLED_MODEL_SHA256) -> Any:
    return query_encoder.build(
        model,
        word_pieces=WordPieces.of(model.tokenizer, max_length=256),
        expected=query_encoder.probe_vectors(model),
        model_id="all-MiniLM-L6-v2",
        weights_sha256=weights_sha256,
        cache_dir=cache_dir,
        threads=1,
    )


def test_the_export_is_made_once_and_reused(torch_model: Any, tmp_path: Path) -> None:
    first = built(torch_model, tmp_path)
    (exported,) = tmp_path.glob("*.onnx")
    assert BUNDLED_MODEL_SHA256[:16] in exported.name
    assert exported.stat().st_mode & 0o777 == 0o644  # readable by another user sharing the cache
    modified = exported.stat().st_mtime_ns
    second = built(torch_model, tmp_path)
    assert exported.stat().st_mtime_ns == modified
    assert list(tmp_path.glob("*.onnx*")) == [exported]
    assert np.allclose(first.embed(["a query"]), second.embed(["a query"]), atol=1e-6)


def test_a_graph_that_differs_from_the_model_is_refused(torch_model: Any, tmp_path: Path) -> None:
    # An export of another model under this model's name (say, a stale or tampered cache file).
    good = query_encoder.export_path(
        Path(settings.EMBEDDING_CACHE_DIR), "all-MiniLM-L6-v2", BUNDLED_MODEL_SHA256
    )
    target = query_encoder.export_path(tmp_path, "all-MiniLM-L6-v2", "f" * 64)
    shutil.copy(good, target)
    with pytest.raises(query_encoder.QueryEncoderUnavailable, match="differs from the model"):
        built(_shuffled(torch_model), tmp_path, "f" * 64)


def test_an_unusable_cache_falls_back_to_torch(tmp_path: Path, settings: Settings) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory should be")
    settings.EMBEDDING_CACHE_DIR = blocked
    fallback = SentenceTransformerEmbedder(
        bundled_model_dir(),
        model_id="all-MiniLM-L6-v2",
        weights_sha256=BUNDLED_MODEL_SHA256,
        query_backend="onnx",
    )
    assert fallback.query_backend == "torch"
    vector = np.asarray(fallback.embed_query("still answers"))
    assert float(vector @ np.asarray(fallback.embed_batch(["still answers"])[0])) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("size", "asked", "embedded"),
    [
        # Size 0 (EMBEDDING_QUERY_CACHE_SIZE=0, as the benchmark runs): every query is embedded.
        (0, ["a", "a"], ["a", "a"]),
        # Size 2: "a" is forgotten once "b" and "c" came after it; "c" is still kept.
        (2, ["a", "b", "c", "c", "a"], ["a", "b", "c", "a"]),
    ],
)
def test_the_query_cache_keeps_only_its_size(
    size: int, asked: list[str], embedded: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = SentenceTransformerEmbedder(
        bundled_model_dir(), model_id="all-MiniLM-L6-v2", recent_queries=size
    )
    runs: list[str] = []
    encode = embedder.embed_batch

    def counted(texts: Sequence[str]) -> list[list[float]]:
        runs.extend(texts)
        return encode(texts)

    monkeypatch.setattr(embedder, "embed_batch", counted)
    for query in asked:
        assert len(embedder.embed_query(query)) == 384
    assert runs == embedded


def _shuffled(torch_model: Any) -> Any:
    """A copy of the model whose last layer's output projection is perturbed: a different model."""
    import torch

    model = copy.deepcopy(torch_model)
    transformer: Any = model[0].auto_model
    layer = transformer.encoder.layer[-1].output.dense
    with torch.no_grad():
        layer.weight.add_(torch.randn_like(layer.weight) * 0.05)
    return model


def test_concurrent_queries_get_the_same_vectors(embedder: SentenceTransformerEmbedder) -> None:
    from concurrent.futures import ThreadPoolExecutor

    queries = [f"question number {n} about tides and barrages" for n in range(24)]
    queries += ["why", "what do the tidal barrages of the Severn estuary cost to run each year?"]
    alone = [embedder.embed_query(query) for query in queries]
    with ThreadPoolExecutor(max_workers=6) as pool:
        together = list(pool.map(embedder.embed_query, queries))
    # Queries that meet in one forward pass (query_batches.py) get their vectors alone, bit for bit.
    assert together == alone


def test_a_query_embedded_alone_and_in_three_batches_is_the_same_bytes(
    embedder: SentenceTransformerEmbedder,
) -> None:
    assert embedder._query_encoder is not None
    encode = embedder._query_encoder.embed
    text = "how are the rounding errors of a float32 matrix product bounded?"
    alone = encode([text])[0].tobytes()
    batches = [
        ["a", text],
        [text, "a much longer question that pads the batch to well beyond the text's own word pieces"],
        ["tides", "what is a barrage?", text, "why do estuaries silt up over the centuries?"],
    ]
    for batch in batches:
        assert encode(batch)[batch.index(text)].tobytes() == alone
    # Within a pass of like lengths (query_encoder.like_lengths) the text is padded, still the same.
    pieces = embedder._query_encoder._word_pieces
    partner = "how are the rounding errors of a float32 matrix product bounded in practice?"
    own, theirs = (len(pieces.batch([each], ["input_ids"])["input_ids"][0]) for each in (text, partner))
    assert own < theirs <= MAX_PADDING * own
    assert encode([partner, text])[1].tobytes() == alone


def test_a_batch_is_run_in_passes_of_like_lengths() -> None:
    lengths = np.asarray([10, 30, 11, 12, 13, 40, 9, 46])
    groups = [[int(lengths[row]) for row in rows] for rows in like_lengths(lengths)]
    assert groups == [[9, 10, 11, 12, 13], [30, 40], [46]]
    assert sorted(int(row) for rows in like_lengths(lengths) for row in rows) == list(range(8))
    assert [list(rows) for rows in like_lengths(np.asarray([7, 7, 7]))] == [[0, 1, 2]]


def test_a_repeated_query_is_embedded_once(
    embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert embedder._query_encoder is not None
    runs: list[list[str]] = []
    encode = embedder._query_encoder.embed

    def counted(texts: list[str]) -> np.ndarray:
        runs.append(texts)
        return encode(texts)

    monkeypatch.setattr(embedder._query_encoder, "embed", counted)
    query = "a query asked twice, as paging through results does"
    first = embedder.embed_query(query)
    first[0] = 42.0  # the caller's copy; the remembered vector is not touched
    second = embedder.embed_query(query)
    assert runs == [[query]]
    assert second != first and second == embedder.embed_query(query)
    assert len(second) == 384
