"""The Embedder interface: what ingestion and search need from an embedding model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from django.core.exceptions import ImproperlyConfigured


class ModelIntegrityError(ImproperlyConfigured):
    """The model's weights are not the ones this release was built and measured with."""


class EmbeddingError(Exception):
    """The model could not embed the texts (a remote endpoint failed); the message is safe to show."""


class Embedder(Protocol):
    model_id: str
    max_tokens: int

    @property
    def dim(self) -> int: ...

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...

    def count_tokens(self, text: str) -> int: ...

    def token_starts(self, text: str) -> list[int]: ...
