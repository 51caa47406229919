"""The model's graph with int8 weights, built once into EMBEDDING_CACHE_DIR beside the float graph
(query_encoder.py, from verified weights). Ingest batches run on it (document_encoder.py), and so do
queries with EMBEDDING_QUERY_BACKEND=onnx-int8 (query_encoder.py).

Three steps: the model exported with eager attention; ONNX Runtime's transformer optimizer fuses
each layer's attention into one Attention operator (and the embeddings, layer norms and GELUs into
theirs); dynamic quantization turns the MatMul and Attention weights to int8, one scale per output
channel, activations quantized on the fly (QAttention). Fused, a batch runs about 1.2 times as fast
as the same weights quantized unfused (docs/benchmarks.md); a model whose layers the optimizer does
not recognise is quantized as exported.
"""

from __future__ import annotations

import fcntl
import logging
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

# int8 weights move a vector by about 0.007 in cosine on average (0.99344 on 512 real chunks); a
# probe further off than this means the quantized graph is not the model.
MIN_PROBE_COSINE = 0.97


@dataclass(frozen=True)
class Fusion:
    """What the transformer optimizer needs to know of the model."""

    heads: int
    hidden: int


def quantized_path(float_path: Path) -> Path:
    return float_path.with_name(float_path.stem + "-fused-int8-per-channel.onnx")


@contextmanager
def _quiet() -> Iterator[None]:
    """The optimizer and the quantizer log, on the root logger, a line per node they fuse or leave
    in float (INFO) and advice to pre-process the graph (WARNING) that a user can do nothing about.
    Their failures raise: the encoder that asked falls back to torch, with a warning."""
    previous = logging.root.manager.disable
    logging.disable(max(previous, logging.WARNING))
    try:
        yield
    finally:
        logging.disable(previous)


def fuse(source: Path, target: Path, fusion: Fusion) -> int:
    """The graph at `source` with its layers fused, into `target`; the number of fused attentions."""
    from onnxruntime.transformers.optimizer import optimize_model

    with _quiet():
        optimized = optimize_model(
            str(source), model_type="bert", num_heads=fusion.heads, hidden_size=fusion.hidden, opt_level=1
        )
        optimized.save_model_to_file(str(target))
    return int(optimized.get_fused_operator_statistics().get("Attention", 0))


def quantize(source: Path, target: Path) -> None:
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with _quiet():
        quantize_dynamic(
            str(source),
            str(target),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul", "Attention"],
            # The fused operators are outside ONNX's shape inference; their outputs are float.
            extra_options={"DefaultTensorType": TensorProto.FLOAT},
        )


def build(target: Path, export_eager: Callable[[Path], None], fusion: Fusion) -> None:
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".int8-") as work:
        exported, fused, partial = (Path(work) / name for name in ("eager.onnx", "fused.onnx", "int8.onnx"))
        export_eager(exported)
        try:
            attentions = fuse(exported, fused, fusion)
        except Exception as exc:  # a layout the optimizer cannot read is quantized unfused (slower)
            logger.warning(
                "the encoder graph was not fused (%s: %s); quantizing it unfused", type(exc).__name__, exc
            )
            fused, attentions = exported, 0
        logger.info("fused %d attention layers of the encoder graph", attentions)
        quantize(fused, partial)
        os.replace(partial, target)


def ensure_quantized(source: Path, export_eager: Callable[[Path], None], fusion: Fusion) -> Path:
    """The int8 graph for the float graph at `source` (named after it), built first if it is not
    there yet (once, under the exports' lock)."""
    target = quantized_path(source)
    if not target.is_file():
        with (source.parent / ".export.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not target.is_file():
                logger.info("building the encoder's int8 graph %s (once per model and version)", target)
                build(target, export_eager, fusion)
    return target
