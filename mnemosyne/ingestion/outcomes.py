"""What an ingest of one document came to, what a whole run came to, and whether one is needed.

An item is up to date when it holds the chunks of these very bytes (content_hash), made with these
settings (ingest_config_signature) — callers ask before they parse, so an unchanged document costs
one indexed lookup (a few hundred at once when a directory is ingested again).
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from django.conf import settings

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion.inputs import Skipped
from mnemosyne.ingestion.item_context import given_by_item
from mnemosyne.library.models import Collection, EmbeddingStatus, Item
from mnemosyne.profiles.catalog import profile_of


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


# The words a run is counted in, in this order, by every door: `manage.py ingest`, a source's sync,
# the admin and get_ingestion_status (a source's last counts).
RUN_COUNTS = ("created", "updated", "unchanged", "renamed", "deleted", "failed", "skipped")


@dataclass
class RunReport:
    """What one run did to a collection — a command-line ingest, a source's sync, a background
    enqueue — counted by outcome."""

    # One per input read: created, updated, unchanged or failed.
    results: list[IngestResult] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    # Items whose file moved (a sync: the same bytes under a new name), and items deleted because
    # their file is gone (a sync; `ingest --prune`).
    renamed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    # Tasks queued by a background run, which ingests nothing itself.
    enqueued: int | None = None
    # Why the run did nothing at all (another sync of the same source was running).
    busy: str = ""

    def counts(self) -> dict[str, int]:
        by_outcome = {outcome.value: 0 for outcome in Outcome}
        for result in self.results:
            by_outcome[result.outcome.value] += 1
        counts = {
            **by_outcome,
            "renamed": len(self.renamed),
            "deleted": len(self.deleted),
            "skipped": len(self.skipped),
        }
        ordered = {name: counts[name] for name in RUN_COUNTS}
        return ordered if self.enqueued is None else {"enqueued": self.enqueued, **ordered}

    def errors(self) -> list[str]:
        """Each failed input and why."""
        return [f"{r.source}: {r.error}" for r in self.results if r.outcome == Outcome.FAILED]

    def line(self) -> str:
        if self.busy:
            return self.busy
        counts = self.counts()
        if self.enqueued is not None:
            counts = {name: counts[name] for name in ("enqueued", "failed", "skipped", "deleted")}
        line = ", ".join(f"{count} {name}" for name, count in counts.items())
        if self.enqueued is not None:
            return line
        chunks = sum(result.chunk_count for result in self.results if result.outcome != Outcome.FAILED)
        return f"{line}; {chunks} chunks in the ingested items"

    def every_input_failed(self) -> bool:
        """True when inputs were tried and none was ingested (a run with nothing to do is no failure)."""
        counts = self.counts()
        ingested = counts["created"] + counts["updated"] + counts["unchanged"] + (self.enqueued or 0)
        return ingested == 0 and counts["failed"] + counts["skipped"] > 0


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def ingest_config_signature(embedder: Embedder, library_type: str) -> str:
    """What, besides the bytes, decides an item's chunks; a change re-ingests it. The library's
    profile is part of it: another profile reads what documents are, and writes the index, its way."""
    return (
        f"{embedder.model_id}|{settings.CHUNK_MAX_TOKENS}|{settings.CHUNK_OVERLAP_TOKENS}"
        # v5: documents know what they are (identity.py) and every chunk's context says so; tables
        # without rules; numbers indexed as typed; pages indexed. v6: what a document is, and how
        # the index writes it, are its library profile's (mnemosyne/profiles).
        f"|{settings.CHUNK_SECTION_TOKENS}|{settings.OCR}|v6|{profile_of(library_type).name}"
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
    signature = ingest_config_signature(embedder, collection.library.library_type)

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
