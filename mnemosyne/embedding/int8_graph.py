"""The model's graph with int8 weights: the exported float graph (query_encoder.py, from verified
weights) quantized once with ONNX Runtime's dynamic quantization — the weights of its MatMuls to
int8, one scale per output channel, activations quantized on the fly — into EMBEDDING_CACHE_DIR
beside it. Ingest batches run on it (document_encoder.py), and so do queries with
EMBEDDING_QUERY_BACKEND=onnx-int8 (query_encoder.py).
"""

from __future__ import annotations

import logging
from pathlib import Path

from mnemosyne.embedding import graph_cache

# int8 weights move a vector by about 0.007 in cosine on average (0.99344 on 512 real chunks); a
# probe further off than this means the quantized graph is not the model.
MIN_PROBE_COSINE = 0.97


def quantized_path(float_path: Path) -> Path:
    return float_path.with_name(float_path.stem + "-int8-per-channel.onnx")


def quantize(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    previous = logging.root.manager.disable
    with graph_cache.written_whole(target) as partial:
        try:
            # Quiet: the quantizer logs, on the root logger, a line per tensor it leaves in float
            # (INFO) and advice to pre-process the graph first (WARNING) that a user can do nothing
            # about. Its failures raise: the encoder that asked falls back to torch, with a warning.
            logging.disable(max(previous, logging.WARNING))
            quantize_dynamic(
                str(source),
                str(partial),
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
            )
        finally:
            logging.disable(previous)


def ensure_quantized(source: Path) -> Path:
    """The int8 graph of the float graph at `source`, quantized first if it is not there yet (once,
    under the exports' lock)."""
    return graph_cache.built_once(
        quantized_path(source), lambda target: quantize(source, target), doing="quantizing"
    )
