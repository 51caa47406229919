"""Query embeddings on ONNX Runtime: the same model's transformer, exported once from verified weights.

A search embeds one short query. sentence-transformers on torch spends most of that time in
Python around small matrix products (about 25 ms on a 2-core machine); ONNX Runtime runs the
same graph in about 7 ms. Ingest batches run on the same graph with int8 weights
(document_encoder.py; in float it is no faster than torch on long, padded batches).

The transformer is exported with torch.onnx from the model already loaded, so from weights whose
SHA-256 was checked, less the attention's redundant nodes (attention_graph.py), into
EMBEDDING_CACHE_DIR under a name carrying that digest and the exporting versions (several
processes starting at once export it once, under a file lock). Every load checks the exported
graph against the torch model's vectors of probe sentences (cosine ≥ 0.9999 after the model's own
pooling and normalisation) — computed by the model, or read from the record an earlier process
left once the graphs passed (checked_graphs.py); when it differs, or cannot be built, queries stay
on torch and a warning says why.
"""

from __future__ import annotations

import logging
import re
import time
import warnings
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from mnemosyne.embedding import attention_graph, graph_cache, int8_graph
from mnemosyne.embedding.word_pieces import WordPieces

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)

PROBES = (
    "What causes the seasons on Earth?",
    "Antiretroviral therapy reduces rates of tuberculosis across a broad range of CD4 strata.",
    "How do I run several workers behind nginx?",
)
MIN_PROBE_COSINE = 0.9999
OPSET = 17
# In the graph's file name; raised whenever the export itself changes (2: attention_graph.py), so
# that a graph cached by an older export is never read.
GRAPH_REVISION = 2


class QueryEncoderUnavailable(Exception):
    """The ONNX query encoder cannot be used; queries are embedded with torch instead."""


def export_path(cache_dir: Path, model_id: str, weights_sha256: str) -> Path:
    # The installed versions, read without importing torch (seconds) or the runtime.
    torch_version, ort_version = version("torch"), version("onnxruntime")
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(model_id).name or model_id)
    versions = f"torch{torch_version}-ort{ort_version}-opset{OPSET}-g{GRAPH_REVISION}"
    return cache_dir / f"{slug}-{weights_sha256[:16]}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', versions)}.onnx"


def _last_hidden_state(transformer: Any) -> Any:
    """The Hugging Face model as a module with plain tensors in and out, for tracing."""
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            output = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return output.last_hidden_state

    return LastHiddenState().eval()


def _export(model: SentenceTransformer, target: Path) -> None:
    import torch

    transformer = model[0].auto_model
    encoded = model.tokenizer(["export"], return_tensors="pt")
    inputs = ("input_ids", "attention_mask", "token_type_ids")
    dynamic = {name: {0: "batch", 1: "sequence"} for name in (*inputs, "last_hidden_state")}
    with graph_cache.written_whole(target) as partial:
        with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _last_hidden_state(transformer),
                tuple(encoded[name] for name in inputs),
                str(partial),
                input_names=list(inputs),
                output_names=["last_hidden_state"],
                dynamic_axes=dynamic,
                opset_version=OPSET,
                dynamo=False,
            )
        attention_graph.simplify(partial)


def pooled(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """The model's own pooling: the mean of the tokens' states, L2-normalised."""
    mask = attention_mask[..., None].astype(np.float32)
    means = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(means, axis=1, keepdims=True)
    result: np.ndarray = means / np.clip(norms, 1e-12, None)
    return result


class OnnxQueryEncoder:
    """Embeds single queries with ONNX Runtime: mean pooling over the tokens, then L2 normalisation."""

    def __init__(self, word_pieces: WordPieces, *, path: Path, threads: int) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._input_names = [node.name for node in self._session.get_inputs()]
        # Queries arrive on several threads at once: each batch tokenizes on a tokenizer of its own,
        # one of those idle (word_pieces.py); the session runs them concurrently.
        self._word_pieces = word_pieces

    def embed(self, texts: list[str]) -> np.ndarray:
        feeds = self._word_pieces.batch(texts, self._input_names)
        if len(texts) == 1:
            (hidden,) = self._session.run(["last_hidden_state"], feeds)
            return pooled(hidden, feeds["attention_mask"])
        # The graph computes every padded position: a pass over queries of a like length each.
        lengths = feeds["attention_mask"].sum(axis=1)
        vectors: np.ndarray | None = None
        for rows in like_lengths(lengths):
            width = int(lengths[rows].max())
            part = {name: feed[rows, :width] for name, feed in feeds.items()}
            (hidden,) = self._session.run(["last_hidden_state"], part)
            pooled_rows = pooled(hidden, part["attention_mask"])
            if vectors is None:
                vectors = np.empty((len(texts), pooled_rows.shape[1]), dtype=pooled_rows.dtype)
            vectors[rows] = pooled_rows
        assert vectors is not None
        return vectors


# A pass pads no query to more than this times its own length in word pieces.
MAX_PADDING = 1.5


def like_lengths(lengths: np.ndarray) -> list[np.ndarray]:
    """The rows of a batch in groups of like length, shortest first: each group's longest at most
    MAX_PADDING times its shortest.

    A forward pass costs what its padded positions cost: SciFact queries in one pass of 16 cost
    7.3 ms of CPU a query, against 4.6 alone. More passes cost more than their CPU shows: under
    50 clients, groups within 1.25 times their length (about five passes for 16) used less CPU
    but served no more searches than one pass; within 1.5 times (about three), both
    (docs/benchmarks.md).
    """
    order = np.argsort(lengths, kind="stable")
    groups: list[list[int]] = []
    shortest = 0
    for row in order.tolist():
        if not groups or lengths[row] > MAX_PADDING * shortest:
            groups.append([])
            shortest = int(lengths[row])
        groups[-1].append(row)
    return [np.asarray(group) for group in groups]


def ensure_exported(
    model: SentenceTransformer, *, model_id: str, weights_sha256: str, cache_dir: Path
) -> Path:
    """The float graph's path, exported first if it is not there yet (once, under a file lock)."""

    def export(target: Path) -> None:
        started = time.perf_counter()
        _export(model, target)
        logger.info("exported the encoder graph in %.1f s", time.perf_counter() - started)

    return graph_cache.built_once(export_path(cache_dir, model_id, weights_sha256), export, doing="exporting")


def exported(model: SentenceTransformer, *, model_id: str, weights_sha256: str, cache_dir: Path) -> Path:
    """ensure_exported, its failures (an unusable cache directory, an exporter error) raised as
    QueryEncoderUnavailable: they must take neither search nor ingest down."""
    try:
        return ensure_exported(model, model_id=model_id, weights_sha256=weights_sha256, cache_dir=cache_dir)
    except Exception as exc:
        raise QueryEncoderUnavailable(f"{type(exc).__name__}: {exc}") from exc


class _Encoder(Protocol):
    def embed(self, texts: list[str]) -> np.ndarray: ...


EncoderT = TypeVar("EncoderT", bound=_Encoder)


def probe_vectors(model: SentenceTransformer) -> np.ndarray:
    """The torch model's own vectors of the probe sentences: what every encoder is checked against."""
    vectors: np.ndarray = model.encode(list(PROBES), normalize_embeddings=True, convert_to_numpy=True)
    return vectors


def checked(expected: np.ndarray, make: Callable[[], EncoderT], *, minimum: float, graph: str) -> EncoderT:
    """The encoder `make()` builds, if its vectors for the probe sentences are all within `minimum`
    (cosine) of the torch model's (`expected`, probe_vectors); raises QueryEncoderUnavailable
    otherwise, and when it cannot be built — an exporter, quantizer or runtime failure must take
    neither search nor ingest down."""
    try:
        encoder = make()
        cosine = float((expected * encoder.embed(list(PROBES))).sum(axis=1).min())
    except ImportError as exc:
        raise QueryEncoderUnavailable(f"{exc.name or exc} is not installed") from exc
    except Exception as exc:
        raise QueryEncoderUnavailable(f"{type(exc).__name__}: {exc}") from exc
    if cosine < minimum:
        raise QueryEncoderUnavailable(
            f"the {graph} graph differs from the model (probe cosine {cosine:.6f} < {minimum})"
        )
    return encoder


def build(
    model: SentenceTransformer,
    *,
    word_pieces: WordPieces,
    expected: np.ndarray,
    model_id: str,
    weights_sha256: str,
    cache_dir: Path,
    threads: int,
    int8: bool = False,
) -> OnnxQueryEncoder:
    """Export (once) and load the encoder, checked against the torch model; raises QueryEncoderUnavailable.

    With `int8`, on the graph's int8 form (int8_graph.py, EMBEDDING_QUERY_BACKEND=onnx-int8),
    checked to that form's looser bound.
    """

    path = exported(model, model_id=model_id, weights_sha256=weights_sha256, cache_dir=cache_dir)
    return load(path, word_pieces=word_pieces, expected=expected, threads=threads, int8=int8)


def load(
    path: Path, *, word_pieces: WordPieces, expected: np.ndarray, threads: int, int8: bool
) -> OnnxQueryEncoder:
    """The encoder on the exported graph at `path` (or its int8 form), checked against `expected`."""

    def make() -> OnnxQueryEncoder:
        return OnnxQueryEncoder(
            word_pieces, path=int8_graph.ensure_quantized(path) if int8 else path, threads=threads
        )

    if int8:
        return checked(expected, make, minimum=int8_graph.MIN_PROBE_COSINE, graph="int8")
    return checked(expected, make, minimum=MIN_PROBE_COSINE, graph="exported")
