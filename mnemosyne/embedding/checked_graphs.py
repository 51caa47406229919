"""What a process that loaded the model through torch learnt of its exported graphs, kept beside
them so the processes after it load the graphs without torch.

Importing sentence-transformers (transformers, torch, scikit-learn) costs seconds — most of a
server's, a command's or a stdio session's start — though queries and ingest batches run on
ONNX Runtime. Once the float graph and its int8 form have passed their probe check against the
torch model, this record keeps the model's dimension, its tokenizer as the model configured it
(word_pieces.py), the torch model's own probe vectors and each graph file's SHA-256. A later
process that finds the record, and graph files with those digests, checks the graphs against
those probe vectors as it would against torch, and never imports torch; any other case (no
record, a file changed, a failed check) loads the model as before and writes the record again.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mnemosyne.embedding.digests import sha256_of

logger = logging.getLogger(__name__)

FORMAT = 1


@dataclass(frozen=True)
class CheckedGraphs:
    dim: int
    word_pieces: dict[str, Any]
    probes: np.ndarray


def record_path(export: Path) -> Path:
    return export.with_name(export.name + ".checked.json")


def save(
    export: Path, *, dim: int, word_pieces: dict[str, Any], probes: np.ndarray, graphs: list[Path]
) -> None:
    """Record the checked graphs (written whole: a reader never sees half a record)."""
    record = {
        "format": FORMAT,
        "dim": dim,
        "word_pieces": word_pieces,
        "probes": probes.astype(float).tolist(),
        "graphs": {graph.name: sha256_of(graph) for graph in graphs},
    }
    target = record_path(export)
    try:
        with tempfile.NamedTemporaryFile(
            "w", dir=target.parent, suffix=".partial", delete=False, encoding="utf-8"
        ) as handle:
            json.dump(record, handle)
            partial = Path(handle.name)
        partial.chmod(0o644)
        os.replace(partial, target)
    except OSError as exc:  # a read-only cache: the next process loads torch again, no more
        logger.warning("could not record the checked encoder graphs in %s: %s", target.parent, exc)


def load(export: Path) -> CheckedGraphs | None:
    """The record of the graphs beside `export`, if there is one and every graph it names is still
    the file that was checked."""
    try:
        record = json.loads(record_path(export).read_text(encoding="utf-8"))
        if record.get("format") != FORMAT:
            return None
        for name, digest in record["graphs"].items():
            if sha256_of(export.parent / name) != digest:
                logger.warning("the encoder graph %s changed since it was checked: checking it again", name)
                return None
        return CheckedGraphs(
            dim=int(record["dim"]),
            word_pieces=dict(record["word_pieces"]),
            probes=np.asarray(record["probes"], dtype=np.float32),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
