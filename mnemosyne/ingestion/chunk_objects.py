"""A written item's objects in the chunk store: stored before its chunks' transaction, removed again
when that transaction fails, and its earlier versions' removed once it commits (ingestion/pipeline.py).
"""

from __future__ import annotations

import logging

from mnemosyne.ingestion.services import ItemChunks
from mnemosyne.library.models import Chunk
from mnemosyne.storage import ChunkStore, StorageError, keys

logger = logging.getLogger(__name__)


def put(entry: ItemChunks, store: ChunkStore) -> None:
    """Store the item's original, its pages' text and its chunks' text and images under its version
    prefix."""
    if entry.original:
        store.put(keys.original_key(entry.prefix), entry.original)
    for number, text in entry.pages:
        store.put(keys.page_key(entry.prefix, number), text.encode("utf-8"))
    for ordinal, chunk in enumerate(entry.chunks):
        store.put(keys.text_key(entry.prefix, ordinal), chunk.span.text.encode("utf-8"))
        if chunk.image is not None:
            store.put(keys.image_key(entry.prefix, ordinal, chunk.image_extension), chunk.image.data)


def discard_new(entry: ItemChunks, store: ChunkStore) -> None:
    """Remove what a failed write stored, unless the item's current chunks point there too."""
    in_use = Chunk.objects.filter(item_id=entry.item.pk, storage_key__startswith=f"{entry.prefix}/").exists()
    if not in_use:
        try:
            store.delete_prefix(entry.prefix)
        except StorageError as exc:
            logger.warning("could not remove the objects under %s: %s", entry.prefix, exc)
        except Exception:
            logger.exception("could not remove the objects under %s", entry.prefix)


def delete_old(store: ChunkStore, old_prefixes: set[str], *, keep: str) -> None:
    """Delete the item's earlier versions' objects (its new chunks are committed by now)."""
    for old_prefix in old_prefixes - {keep}:
        store.delete_prefix(old_prefix)
