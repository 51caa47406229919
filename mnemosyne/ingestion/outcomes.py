"""What an ingest of one document came to, and whether one is needed at all.

An item is up to date when it holds the chunks of these very bytes (content_hash), made with these
settings (ingest_config_signature) — callers ask before they parse, so an unchanged document costs
one indexed lookup (a few hundred at once when a directory is ingested again).
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from django.conf import settings

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.item_context import given_by_item
from mnemosyne.library.models import Collection, EmbeddingStatus, Item


class Outcome(enum.StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    FAILED = "failed"


@dataclass(frozen=True)
class IngestResult:
    source: str
    outcome: Outcome
    item_uid: str | None = None
    chunk_count: int = 0
    error: str = ""
    # How an ingested document was read, when a user should know (OCR, pages without text).
    notes: tuple[str, ...] = ()


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def ingest_config_signature(embedder: Embedder) -> str:
    """What, besides the bytes, decides an item's chunks; a change re-ingests it."""
    return (
        f"{embedder.model_id}|{settings.CHUNK_MAX_TOKENS}|{settings.CHUNK_OVERLAP_TOKENS}"
        # v5: documents know what they are (identity.py) and every chunk's context says so; tables
        # without rules; numbers indexed as typed; pages indexed.
        f"|{settings.CHUNK_SECTION_TOKENS}|{settings.OCR}|v5"
    )


def unchanged_result(
    *,
    collection: Collection,
    source: str,
    digest: str,
    embedder: Embedder,
    given: Mapping[str, object] | None = None,
) -> IngestResult | None:
    """The result for an item already ingested from these very bytes and settings, else None.

    Lets a caller skip parsing a document it would only find unchanged (one indexed query).
    """
    lookup = unchanged_results(collection=collection, sources=[source], embedder=embedder, given=given)
    return lookup(source, digest)


def unchanged_results(
    *,
    collection: Collection,
    sources: Iterable[str],
    embedder: Embedder,
    given: Mapping[str, object] | None = None,
) -> Callable[[str, str], IngestResult | None]:
    """unchanged_result for any of `sources`, their items read with one query now."""
    items = {item.source: item for item in Item.objects.filter(collection=collection, source__in=sources)}
    signature = ingest_config_signature(embedder)

    def result(source: str, digest: str) -> IngestResult | None:
        item = items.get(source)
        if item is None or not up_to_date(item, digest, signature, given):
            return None
        return IngestResult(source, Outcome.UNCHANGED, item.uid, item.chunk_count)

    return result


def up_to_date(item: Item, digest: str, signature: str, given: Mapping[str, object] | None = None) -> bool:
    """The item holds the chunks of these very bytes, made with these settings, and says of itself
    what a person now gives (`--meta`, a source's or an upload's document metadata)."""
    return (
        item.content_hash == digest
        and item.embedding_status == EmbeddingStatus.COMPLETE
        and item.metadata.get("ingest_config") == signature
        and (not given or given_by_item(item) == dict(given))
    )
