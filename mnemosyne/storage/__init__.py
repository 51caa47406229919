"""The configured ChunkStore (CHUNK_STORE): filesystem under the data dir by default."""

from __future__ import annotations

from django.conf import settings

from mnemosyne.storage.base import ChunkNotFound, ChunkStore
from mnemosyne.storage.filesystem import FilesystemChunkStore

__all__ = ["ChunkNotFound", "ChunkStore", "get_chunk_store"]

_stores: dict[str, ChunkStore] = {}


def get_chunk_store() -> ChunkStore:
    root = settings.MNEMOSYNE_DATA_DIR / "chunks"
    key = str(root)
    if key not in _stores:
        _stores[key] = FilesystemChunkStore(root)
    return _stores[key]
