"""The configured ChunkStore (CHUNK_STORE): filesystem under the data dir by default, or S3."""

from __future__ import annotations

from typing import cast

from django.conf import settings

from mnemosyne.lib import outages
from mnemosyne.storage.base import ChunkNotFound, ChunkStore, InvalidKey, StorageError
from mnemosyne.storage.filesystem import FilesystemChunkStore
from mnemosyne.storage.s3 import S3ChunkStore

__all__ = ["ChunkNotFound", "ChunkStore", "InvalidKey", "StorageError", "get_chunk_store"]

# One store per distinct configuration: overridden settings (tests) get a store of their own.
_stores: dict[tuple[object, ...], ChunkStore] = {}


def get_chunk_store() -> ChunkStore:
    if settings.CHUNK_STORE == "s3":
        key: tuple[object, ...] = (
            "s3",
            settings.S3_BUCKET,
            settings.S3_PREFIX,
            settings.S3_ENDPOINT_URL,
            settings.S3_REGION,
            settings.S3_CONNECT_TIMEOUT,
            settings.S3_READ_TIMEOUT,
            settings.S3_MAX_ATTEMPTS,
        )
        if key not in _stores:
            _stores[key] = _watched(
                S3ChunkStore(
                    bucket=settings.S3_BUCKET,
                    prefix=settings.S3_PREFIX,
                    endpoint_url=settings.S3_ENDPOINT_URL,
                    region=settings.S3_REGION,
                    connect_timeout=settings.S3_CONNECT_TIMEOUT,
                    read_timeout=settings.S3_READ_TIMEOUT,
                    max_attempts=settings.S3_MAX_ATTEMPTS,
                )
            )
        return _stores[key]
    root = settings.MNEMOSYNE_DATA_DIR / "chunks"
    key = ("filesystem", str(root))
    if key not in _stores:
        _stores[key] = _watched(FilesystemChunkStore(root))
    return _stores[key]


def _watched(store: ChunkStore) -> ChunkStore:
    """The store, its failures and recoveries reported once per outage (mnemosyne.lib.outages)."""
    return cast(ChunkStore, outages.Watched(store, outages.Dependency.CHUNK_STORE, (StorageError,)))
