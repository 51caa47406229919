"""A process that finds the encoder graphs checked by an earlier one loads them without torch or
sentence-transformers, and embeds exactly as that one did; a graph changed since is checked
against the model again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pytest_django.fixtures import Settings

from mnemosyne.embedding import checked_graphs, query_encoder
from mnemosyne.embedding.sentence_transformer import (
    BUNDLED_MODEL_SHA256,
    SentenceTransformerEmbedder,
    bundled_model_dir,
)
from tests.servers import ROOT, child_env

pytestmark = pytest.mark.slow

TEXTS = ["How do I restore the database from last night's dump?", "glacier", "word " * 400]

# A child process: the bundled model, from the cache directory given, its vectors and what it imported.
CHILD = """
import json, sys
import mnemosyne.lib.py311
import django
django.setup()
from mnemosyne.embedding import get_embedder
embedder = get_embedder()
texts = json.loads(sys.argv[1])
print(json.dumps({
    "torch": "torch" in sys.modules,
    "sentence_transformers": "sentence_transformers" in sys.modules,
    "backends": [embedder.query_backend, embedder.document_backend],
    "queries": [embedder.embed_query(text) for text in texts],
    "documents": embedder.embed_batch(texts),
    "tokens": [embedder.count_tokens(text) for text in texts],
}))
"""


def loaded(cache_dir: Path, data_dir: Path) -> dict[str, object]:
    env = child_env(data_dir, {"EMBEDDING_CACHE_DIR": str(cache_dir)})
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(TEXTS)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_second_process_loads_without_torch_and_embeds_the_same(
    tmp_path: Path, shared_data_dir: Path
) -> None:
    cache = tmp_path / "cache"
    first = loaded(cache, shared_data_dir)
    assert first["torch"] and first["backends"] == ["onnx", "onnx-int8"]
    assert len(list(cache.glob("*.checked.json"))) == 1
    second = loaded(cache, shared_data_dir)
    assert not second["torch"] and not second["sentence_transformers"]
    assert second["backends"] == ["onnx", "onnx-int8"]
    assert second["tokens"] == first["tokens"]
    assert np.allclose(np.asarray(second["queries"]), np.asarray(first["queries"]), atol=1e-6)
    assert np.allclose(np.asarray(second["documents"]), np.asarray(first["documents"]), atol=1e-6)


def test_a_graph_changed_since_its_check_is_checked_against_the_model_again(
    tmp_path: Path, settings: Settings
) -> None:
    settings.EMBEDDING_CACHE_DIR = tmp_path

    def bundled() -> SentenceTransformerEmbedder:
        return SentenceTransformerEmbedder(
            bundled_model_dir(),
            model_id="all-MiniLM-L6-v2",
            weights_sha256=BUNDLED_MODEL_SHA256,
            query_backend="onnx",
            document_backend="onnx-int8",
        )

    assert bundled()._model is not None  # no record yet: loaded through torch, then recorded
    export = query_encoder.export_path(tmp_path, "all-MiniLM-L6-v2", BUNDLED_MODEL_SHA256)
    assert checked_graphs.load(export) is not None
    assert bundled()._model is None  # the record and its graphs: no torch model

    record = json.loads(checked_graphs.record_path(export).read_text())
    record["graphs"][export.name] = "0" * 64  # as if the graph file changed after its check
    checked_graphs.record_path(export).write_text(json.dumps(record))
    again = bundled()
    assert again._model is not None and again.query_backend == "onnx"
    assert checked_graphs.load(export) is not None  # recorded anew
