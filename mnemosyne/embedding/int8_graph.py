"""The model's graph with int8 weights: the exported float graph (query_encoder.py, from verified
weights) quantized once with ONNX Runtime's dynamic quantization — the weights of its MatMuls to
int8, one scale per output channel, activations quantized on the fly — into EMBEDDING_CACHE_DIR
beside it. Ingest batches run on it (document_encoder.py), and so do queries with
EMBEDDING_QUERY_BACKEND=onnx-int8 (query_encoder.py).

Mixed precision: the feed-forward output projections of the first half of the layers stay in
float. Their inputs (after GELU, 1,536 wide) are where one activation scale per tensor loses most;
measured on MiniLM-L6 one layer at a time, those of layers 0 to 2 moved vectors most, the rest no
more than any other product, on abstracts and on technical prose alike. Kept in float, the vectors'
distance to the float model's halves (cosine 0.9948 → 0.9974 mean, 0.990 → 0.996 at worst) for
about a tenth more of the model's time (docs/benchmarks.md). A graph whose nodes are not named
that way is quantized whole.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from mnemosyne.embedding import graph_cache

# int8 weights move a vector by about 0.007 in cosine on average (0.99344 on 512 real chunks); a
# probe further off than this means the quantized graph is not the model.
MIN_PROBE_COSINE = 0.97


def quantized_path(float_path: Path) -> Path:
    return float_path.with_name(float_path.stem + "-int8-per-channel-mixed.onnx")


_FEED_FORWARD_OUTPUT = re.compile(r"layer\.(\d+)/output/dense/MatMul$")


def kept_in_float(node_names: list[str]) -> list[str]:
    """The feed-forward output products of the first half of the layers (see above)."""
    layers = {
        int(found.group(1)): name
        for name in node_names
        if (found := _FEED_FORWARD_OUTPUT.search(name)) is not None
    }
    return [layers[index] for index in sorted(layers) if index < (max(layers, default=-1) + 1) // 2]


def quantize(source: Path, target: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    graph = onnx.load(str(source), load_external_data=False).graph
    float_nodes = kept_in_float([node.name for node in graph.node if node.op_type == "MatMul"])

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
                nodes_to_exclude=float_nodes,
            )
        finally:
            logging.disable(previous)


def ensure_quantized(source: Path) -> Path:
    """The int8 graph of the float graph at `source`, quantized first if it is not there yet (once,
    under the exports' lock)."""
    return graph_cache.built_once(
        quantized_path(source), lambda target: quantize(source, target), doing="quantizing"
    )
