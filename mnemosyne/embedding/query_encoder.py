"""Query embeddings on ONNX Runtime: the same model's transformer, exported once from verified weights.

A search embeds one short query. sentence-transformers on torch spends most of that time in
Python around small matrix products (about 25 ms on a 2-core machine); ONNX Runtime runs the
same graph in about 7 ms. Ingest batches run on the same graph with int8 weights
(document_encoder.py; in float it is no faster than torch on long, padded batches).

The transformer is exported with torch.onnx from the model already loaded, so from weights whose
SHA-256 was checked, less the attention's redundant nodes (attention_graph.py), into
EMBEDDING_CACHE_DIR under a name carrying that digest and the exporting versions (several
processes starting at once export it once, under a file lock). Every load checks the exported
graph against the torch model on probe sentences (cosine ≥ 0.9999 after the model's own pooling
and normalisation); when it differs, or cannot be built, queries stay on torch and a warning
says why.
"""

from __future__ import annotations

import copy
import logging
import re
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from mnemosyne.embedding import attention_graph, graph_cache, int8_graph

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
    import onnxruntime
    import torch

    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(model_id).name or model_id)
    versions = f"torch{torch.__version__}-ort{onnxruntime.__version__}-opset{OPSET}-g{GRAPH_REVISION}"
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

    def __init__(self, model: SentenceTransformer, *, path: Path, threads: int) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._input_names = [node.name for node in self._session.get_inputs()]
        # A tokenizer of its own: fast tokenizers refuse concurrent use ("Already borrowed"),
        # and ingest batches use the model's.
        self._tokenizer = copy.deepcopy(model.tokenizer)
        # Queries arrive on several threads at once: the tokenizer is used by one at a time
        # (a fraction of a millisecond); the session runs them concurrently.
        self._tokenizer_lock = threading.Lock()
        self._max_length = int(model.max_seq_length or 256)

    def embed(self, texts: list[str]) -> np.ndarray:
        with self._tokenizer_lock:
            encoded = self._tokenizer(
                texts, padding=True, truncation=True, max_length=self._max_length, return_tensors="np"
            )
        feeds = {name: np.asarray(encoded[name], dtype=np.int64) for name in self._input_names}
        (hidden,) = self._session.run(["last_hidden_state"], feeds)
        return pooled(hidden, feeds["attention_mask"])


def ensure_exported(
    model: SentenceTransformer, *, model_id: str, weights_sha256: str, cache_dir: Path
) -> Path:
    """The float graph's path, exported first if it is not there yet (once, under a file lock)."""

    def export(target: Path) -> None:
        started = time.perf_counter()
        _export(model, target)
        logger.info("exported the encoder graph in %.1f s", time.perf_counter() - started)

    return graph_cache.built_once(export_path(cache_dir, model_id, weights_sha256), export, doing="exporting")


class _Encoder(Protocol):
    def embed(self, texts: list[str]) -> np.ndarray: ...


EncoderT = TypeVar("EncoderT", bound=_Encoder)


def checked(
    model: SentenceTransformer, make: Callable[[], EncoderT], *, minimum: float, graph: str
) -> EncoderT:
    """The encoder `make()` builds, if its vectors for the probe sentences are all within `minimum`
    (cosine) of the torch model's; raises QueryEncoderUnavailable otherwise, and when it cannot be
    built — an exporter, quantizer or runtime failure must take neither search nor ingest down."""
    try:
        encoder = make()
        expected = model.encode(list(PROBES), normalize_embeddings=True, convert_to_numpy=True)
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

    def make() -> OnnxQueryEncoder:
        path = ensure_exported(model, model_id=model_id, weights_sha256=weights_sha256, cache_dir=cache_dir)
        return OnnxQueryEncoder(
            model, path=int8_graph.ensure_quantized(path) if int8 else path, threads=threads
        )

    if int8:
        return checked(model, make, minimum=int8_graph.MIN_PROBE_COSINE, graph="int8")
    return checked(model, make, minimum=MIN_PROBE_COSINE, graph="exported")
