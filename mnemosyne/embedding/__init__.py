"""Embeddings: the Embedder interface and the process-wide model (ingestion and search share it).

The model itself (sentence_transformer.py, or remote.py with EMBEDDING_URL) is imported on first
use: loading torch takes seconds, and most processes that import this package (commands, the
admin) never embed anything.
"""

from __future__ import annotations

import threading

from mnemosyne.embedding.base import Embedder, EmbeddingError, ModelIntegrityError

__all__ = ["Embedder", "EmbeddingError", "ModelIntegrityError", "get_embedder", "load"]

_embedder: Embedder | None = None
_embedder_lock = threading.Lock()


def get_embedder() -> Embedder:
    """The process-wide embedder, loaded on first use."""
    global _embedder
    if _embedder is None:
        with _embedder_lock:
            if _embedder is None:
                from django.conf import settings

                _embedder = load(settings.EMBEDDING_MODEL)
    return _embedder


def load(model: str) -> Embedder:
    """The model named `model`: at EMBEDDING_URL when that is set, else the bundled model or a local
    sentence-transformers directory (get_embedder's is EMBEDDING_MODEL; `reembed --model` names another)."""
    from django.conf import settings

    from mnemosyne.embedding.sentence_transformer import bundled_model_dir, load_embedder

    if settings.EMBEDDING_URL:
        from mnemosyne.embedding.remote import RemoteEmbedder

        return RemoteEmbedder(
            settings.EMBEDDING_URL,
            model=model,
            api_key=settings.EMBEDDING_API_KEY,
            batch_size=settings.EMBEDDING_BATCH_SIZE,
            timeout=settings.EMBEDDING_TIMEOUT,
            max_tokens=settings.EMBEDDING_MAX_TOKENS,
            tokenizer_file=bundled_model_dir() / "tokenizer.json",
        )
    return load_embedder(model)
