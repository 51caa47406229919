"""Document embeddings (ingest batches) on ONNX Runtime with int8 weights.

The query encoder's exported graph (query_encoder.py, from verified weights) is quantized once with
ONNX Runtime's dynamic quantization — the weights of its MatMuls to int8, one scale per output
channel, activations quantized on the fly — into EMBEDDING_CACHE_DIR beside it. Batches are sorted
by length (less padding) and run on one single-threaded session per core at once: on a 2-core
machine 1.9 times torch's chunks/s ingesting SciFact, whose train nDCG@10 moves from 0.736 to 0.735
(docs/benchmarks.md); vectors at cosine ≈ 0.99 of torch's. Queries stay on the float graph unless
EMBEDDING_QUERY_BACKEND=onnx-int8 puts them on this one too (build_query_encoder).

Every load compares the int8 vectors with torch's on probe sentences; below MIN_PROBE_COSINE, or
when quantization fails, ingest stays on torch and a warning says why.
"""

from __future__ import annotations

import copy
import fcntl
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from mnemosyne.embedding.query_encoder import (
    PROBES,
    OnnxQueryEncoder,
    QueryEncoderUnavailable,
    ensure_exported,
    pooled,
)

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)

# int8 weights move a vector by about 0.007 in cosine on average (0.99344 on 512 real chunks); a
# probe further off than this means the quantized graph is not the model.
MIN_PROBE_COSINE = 0.97


def quantized_path(float_path: Path) -> Path:
    return float_path.with_name(float_path.stem + "-int8-per-channel.onnx")


def _quantize(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".onnx.partial", delete=False) as handle:
        partial = Path(handle.name)
    previous = logging.root.manager.disable
    try:
        # Quiet: the quantizer logs, on the root logger, a line per tensor it leaves in float (INFO)
        # and advice to pre-process the graph first (WARNING) that a user can do nothing about.
        # Its failures raise, and fall back to torch (embedder.py).
        logging.disable(max(previous, logging.WARNING))
        quantize_dynamic(
            str(source),
            str(partial),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
        )
        os.replace(partial, target)
    finally:
        logging.disable(previous)
        partial.unlink(missing_ok=True)


class OnnxDocumentEncoder:
    """Batches on int8 sessions, one single-threaded session per worker thread."""

    def __init__(self, model: SentenceTransformer, *, path: Path, parallel: int, batch_size: int) -> None:
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
        # A tokenizer per session: fast tokenizers refuse concurrent use.
        self._tokenizers = [copy.deepcopy(model.tokenizer) for _ in range(parallel)]
        self._input_names = [node.name for node in self._sessions[0].get_inputs()]
        self._max_length = int(model.max_seq_length or 256)
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
            encoded = self._tokenizers[slot](
                texts, padding=True, truncation=True, max_length=self._max_length, return_tensors="np"
            )
            feeds = {name: np.asarray(encoded[name], dtype=np.int64) for name in self._input_names}
            (hidden,) = self._sessions[slot].run(["last_hidden_state"], feeds)
        finally:
            with self._free_lock:
                self._free.append(slot)
        return pooled(hidden, feeds["attention_mask"])

    def check_against(self, model: SentenceTransformer) -> float:
        expected = model.encode(list(PROBES), normalize_embeddings=True, convert_to_numpy=True)
        return float((expected * self.embed(list(PROBES))).sum(axis=1).min())


def build(
    model: SentenceTransformer,
    *,
    model_id: str,
    weights_sha256: str,
    cache_dir: Path,
    parallel: int,
    batch_size: int,
) -> OnnxDocumentEncoder:
    """Quantize (once) and load the encoder, checked against torch; raises QueryEncoderUnavailable."""
    return _checked(
        model,
        lambda: OnnxDocumentEncoder(
            model,
            path=ensure_quantized(
                model, model_id=model_id, weights_sha256=weights_sha256, cache_dir=cache_dir
            ),
            parallel=parallel,
            batch_size=batch_size,
        ),
    )


def build_query_encoder(
    model: SentenceTransformer, *, model_id: str, weights_sha256: str, cache_dir: Path, threads: int
) -> OnnxQueryEncoder:
    """Single queries on the int8 graph (EMBEDDING_QUERY_BACKEND=onnx-int8), checked likewise."""
    return _checked(
        model,
        lambda: OnnxQueryEncoder(
            model,
            path=ensure_quantized(
                model, model_id=model_id, weights_sha256=weights_sha256, cache_dir=cache_dir
            ),
            threads=threads,
        ),
    )


def ensure_quantized(
    model: SentenceTransformer, *, model_id: str, weights_sha256: str, cache_dir: Path
) -> Path:
    """The int8 graph's path, exported and quantized first if it is not there yet (once, under a lock)."""
    source = ensure_exported(model, model_id=model_id, weights_sha256=weights_sha256, cache_dir=cache_dir)
    target = quantized_path(source)
    if not target.is_file():
        with (cache_dir / ".export.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not target.is_file():
                logger.info("quantizing the encoder graph to %s (once per model and version)", target)
                _quantize(source, target)
    return target


E = TypeVar("E", OnnxDocumentEncoder, OnnxQueryEncoder)


def _checked(model: SentenceTransformer, load: Callable[[], E]) -> E:
    """The encoder `load` gives, if its probe vectors are the model's; raises QueryEncoderUnavailable."""
    try:
        encoder = load()
        cosine = encoder.check_against(model)
    except ImportError as exc:
        raise QueryEncoderUnavailable(f"{exc.name or exc} is not installed") from exc
    except Exception as exc:  # a quantizer or runtime failure must not stop ingest or search
        raise QueryEncoderUnavailable(f"{type(exc).__name__}: {exc}") from exc
    if cosine < MIN_PROBE_COSINE:
        raise QueryEncoderUnavailable(
            f"the int8 graph differs from the model (probe cosine {cosine:.4f} < {MIN_PROBE_COSINE})"
        )
    return encoder
