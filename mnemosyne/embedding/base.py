"""The Embedder interface: what ingestion and search need from an embedding model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from django.core.exceptions import ImproperlyConfigured

# The width of the vector column (library.Chunk.embedding) and of the HNSW index over it.
INDEX_DIMENSIONS = 384


class ModelIntegrityError(ImproperlyConfigured):
    """The model's weights are not the ones this release was built and measured with."""


class Embedder(Protocol):
    model_id: str
    dim: int
    max_tokens: int

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...

    def count_tokens(self, text: str) -> int: ...

    def token_starts(self, text: str) -> list[int]: ...
