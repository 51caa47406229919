"""The exported graph less its attention's redundant nodes: the same outputs, bit for bit, in float
and in int8, on batches padded to their longest text."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from django.conf import settings

from mnemosyne.embedding import attention_graph, int8_graph, query_encoder
from mnemosyne.embedding.sentence_transformer import BUNDLED_MODEL_SHA256, SentenceTransformerEmbedder

pytestmark = pytest.mark.slow

# Batches of very different lengths, so most rows are padded and most keys masked.
BATCHES = [
    ["glacier"],
    ["glacier", "The spring tide floods the lower quay twice a month, " * 12],
    ["Ünïcode, 漢字 and emoji 🙂", "a", "word " * 400, "How do I run several workers behind nginx?"],
]


def outputs(path: Path, torch_model: Any) -> list[np.ndarray]:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    names = [node.name for node in session.get_inputs()]
    tokenizer = torch_model.tokenizer
    results = []
    for texts in BATCHES:
        encoded = tokenizer(texts, padding=True, truncation=True, max_length=256, return_tensors="np")
        feeds = {name: encoded[name].astype(np.int64) for name in names}
        (hidden,) = session.run(["last_hidden_state"], feeds)
        results.append(hidden)
    return results


def test_the_simplified_graph_gives_the_same_outputs_bit_for_bit(
    torch_model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = tmp_path / "raw.onnx"
    with monkeypatch.context() as unsimplified:
        unsimplified.setattr(attention_graph, "simplify", lambda path: 0)
        query_encoder._export(torch_model, raw)
    simplified = tmp_path / "simplified.onnx"
    shutil.copy(raw, simplified)

    # Six layers: each one's NaN guard (Where and IsNaN) and five of the six mask conversions.
    assert attention_graph.simplify(simplified) == 6 * 2 + 5
    before = Counter(node.op_type for node in onnx.load(str(raw)).graph.node)
    after = Counter(node.op_type for node in onnx.load(str(simplified)).graph.node)
    assert (before["IsNaN"], after["IsNaN"]) == (6, 0)
    assert before["Where"] - after["Where"] == 11
    assert after["Softmax"] == 6
    assert attention_graph.simplify(simplified) == 0  # nothing left to drop

    for left, right in zip(outputs(raw, torch_model), outputs(simplified, torch_model), strict=True):
        assert np.array_equal(left, right)
    raw_int8, simplified_int8 = tmp_path / "raw-int8.onnx", tmp_path / "simplified-int8.onnx"
    int8_graph.quantize(raw, raw_int8)
    int8_graph.quantize(simplified, simplified_int8)
    for left, right in zip(
        outputs(raw_int8, torch_model), outputs(simplified_int8, torch_model), strict=True
    ):
        assert np.array_equal(left, right)


def test_the_graph_queries_run_on_is_the_simplified_one(embedder: SentenceTransformerEmbedder) -> None:
    assert embedder.query_backend == "onnx"
    path = query_encoder.export_path(
        Path(settings.EMBEDDING_CACHE_DIR), "all-MiniLM-L6-v2", BUNDLED_MODEL_SHA256
    )
    assert f"-g{query_encoder.GRAPH_REVISION}" in path.name
    ops = Counter(node.op_type for node in onnx.load(str(path)).graph.node)
    assert (ops["IsNaN"], ops["Softmax"]) == (0, 6)
