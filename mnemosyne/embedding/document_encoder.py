"""Document embeddings (ingest batches) on ONNX Runtime with int8 weights (int8_graph.py).

Each text is run alone, longest first, on one single-threaded session per core at once. Alone,
because the int8 graph quantizes its activations on the fly with one scale per tensor: run in a
batch, a text's vector would depend on the texts beside it (cosine 0.984 to 0.9999 for the same text),
and re-ingesting a document beside others would move its vectors and its rankings. Alone, the same
text always gets the same vector, bit for bit — and no padding is computed, which on SciFact makes
it no slower than batches of 16 (docs/benchmarks.md). Vectors at cosine ≈ 0.99 of torch's.

Every load compares the int8 vectors with torch's on probe sentences; below
int8_graph.MIN_PROBE_COSINE, or when quantization fails, ingest stays on torch and a warning says why.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mnemosyne.embedding import int8_graph
from mnemosyne.embedding.query_encoder import checked, exported, pooled
from mnemosyne.embedding.word_pieces import WordPieces

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


class OnnxDocumentEncoder:
    """Batches on int8 sessions, one single-threaded session per worker thread."""

    def __init__(self, word_pieces: WordPieces, *, path: Path, parallel: int) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self._sessions = [
            onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            for _ in range(parallel)
        ]
        # Each batch tokenizes on a tokenizer of its own, one of those idle (word_pieces.py).
        self._word_pieces = word_pieces
        self._input_names = [node.name for node in self._sessions[0].get_inputs()]
        self._pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="embed-documents")
        self._free = list(range(parallel))
        self._free_lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        # Longest first, so the sessions finish together; each text alone (see above).
        order = sorted(range(len(texts)), key=lambda index: len(texts[index]), reverse=True)
        vectors = np.concatenate(list(self._pool.map(lambda index: self._run([texts[index]]), order)))
        result = np.empty_like(vectors)
        result[order] = vectors
        return result

    def _run(self, texts: list[str]) -> np.ndarray:
        with self._free_lock:
            slot = self._free.pop()
        try:
            feeds = self._word_pieces.batch(texts, self._input_names)
            (hidden,) = self._sessions[slot].run(["last_hidden_state"], feeds)
        finally:
            with self._free_lock:
                self._free.append(slot)
        return pooled(hidden, feeds["attention_mask"])


def build(
    model: SentenceTransformer,
    *,
    word_pieces: WordPieces,
    expected: np.ndarray,
    model_id: str,
    weights_sha256: str,
    cache_dir: Path,
    parallel: int,
) -> OnnxDocumentEncoder:
    """Quantize (once) and load the encoder, checked against torch; raises QueryEncoderUnavailable."""

    source = exported(model, model_id=model_id, weights_sha256=weights_sha256, cache_dir=cache_dir)
    return load(source, word_pieces=word_pieces, expected=expected, parallel=parallel)


def load(
    source: Path, *, word_pieces: WordPieces, expected: np.ndarray, parallel: int
) -> OnnxDocumentEncoder:
    """The encoder on the int8 form of the exported graph at `source`, checked against `expected`."""

    def make() -> OnnxDocumentEncoder:
        path = int8_graph.ensure_quantized(source)
        return OnnxDocumentEncoder(word_pieces, path=path, parallel=parallel)

    return checked(expected, make, minimum=int8_graph.MIN_PROBE_COSINE, graph="int8")
