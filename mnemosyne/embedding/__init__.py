"""Embeddings: the Embedder interface and the process-wide model (ingestion and search share it).

The model itself (sentence_transformer.py) is imported on first use: loading torch takes seconds,
and most processes that import this package (commands, the admin) never embed anything.
"""

from __future__ import annotations

import threading

from mnemosyne.embedding.base import INDEX_DIMENSIONS, Embedder, ModelIntegrityError

__all__ = ["INDEX_DIMENSIONS", "Embedder", "ModelIntegrityError", "get_embedder"]

_embedder: Embedder | None = None
_embedder_lock = threading.Lock()


def get_embedder() -> Embedder:
    """The process-wide embedder, loaded on first use."""
    global _embedder
    if _embedder is None:
        with _embedder_lock:
            if _embedder is None:
                from mnemosyne.embedding.sentence_transformer import load_embedder

                _embedder = load_embedder()
    return _embedder
