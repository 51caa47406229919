"""Document embeddings (ingest batches) on ONNX Runtime with int8 weights (int8_graph.py).

Batches are sorted by length (less padding) and run on one single-threaded session per core at
once: on a 2-core machine about 2 times torch's chunks/s ingesting SciFact, whose train nDCG@10
moves from 0.736 to 0.735 (docs/benchmarks.md); vectors at cosine ≈ 0.99 of torch's.

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

    def __init__(self, word_pieces: WordPieces, *, path: Path, parallel: int, batch_size: int) -> None:
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
        # Each worker thread tokenizes on a tokenizer of its own (word_pieces.py).
        self._word_pieces = word_pieces
        self._input_names = [node.name for node in self._sessions[0].get_inputs()]
        self._batch_size = batch_size
        self._pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="embed-documents")
        self._free = list(range(parallel))
        self._free_lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        order = sorted(range(len(texts)), key=lambda index: len(texts[index]), reverse=True)
        batches = [
            order[start : start + self._batch_size] for start in range(0, len(order), self._batch_size)
        ]
        # The batches' vectors in sorted order, put back in the texts' order.
        vectors = np.concatenate(
            list(self._pool.map(lambda batch: self._run([texts[i] for i in batch]), batches))
        )
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
    batch_size: int,
) -> OnnxDocumentEncoder:
    """Quantize (once) and load the encoder, checked against torch; raises QueryEncoderUnavailable."""

    source = exported(model, model_id=model_id, weights_sha256=weights_sha256, cache_dir=cache_dir)
    return load(source, word_pieces=word_pieces, expected=expected, parallel=parallel, batch_size=batch_size)


def load(
    source: Path, *, word_pieces: WordPieces, expected: np.ndarray, parallel: int, batch_size: int
) -> OnnxDocumentEncoder:
    """The encoder on the int8 form of the exported graph at `source`, checked against `expected`."""

    def make() -> OnnxDocumentEncoder:
        path = int8_graph.ensure_quantized(source)
        return OnnxDocumentEncoder(word_pieces, path=path, parallel=parallel, batch_size=batch_size)

    return checked(expected, make, minimum=int8_graph.MIN_PROBE_COSINE, graph="int8")
