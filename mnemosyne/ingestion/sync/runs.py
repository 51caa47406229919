"""Keeping a collection in sync with a Source (`manage.py sync`, `add_source`, a schedule run by
db_worker, `sync --watch`).

A sync lists the source's files (files.py) and compares each one's fingerprint with what the
last sync saw (Source.manifest): only files whose fingerprint changed are read. A new file whose
content is that of a file that went away is a rename: its item is renamed, nothing re-embedded. The
rest goes through the ingest pipeline (which swaps an item's chunks in one transaction, so no item
is ever seen half-synced); items whose file is gone are deleted. A file that cannot be read or
parsed is counted as failed with its reason and tried again at the next sync. One sync of a source
runs at a time (a PostgreSQL advisory lock): another that finds it running is skipped.

Followed as a job (sync_jobs.py), a sync says where it is ("read 3 of 12 changed files") and stops
between two files, or two slices of a file's chunks, when asked: what it had finished is kept
(each item is whole), the source is marked `cancelled` and its manifest left as it was, so the
next sync reads the rest again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath

from django.utils import timezone

from mnemosyne.embedding import Embedder, get_embedder
from mnemosyne.ingestion.documents import DocumentInput, title_from_filename
from mnemosyne.ingestion.intake import Read, Refused, read_input
from mnemosyne.ingestion.outcomes import IngestResult, Outcome, RunReport, unchanged_result
from mnemosyne.ingestion.pipeline import ingest_documents
from mnemosyne.ingestion.sync.files import list_files
from mnemosyne.ingestion.sync.listings import Listed, SourceUnavailable
from mnemosyne.lib import cancellation, progress
from mnemosyne.library.errors import NotFound
from mnemosyne.library.models import EmbeddingStatus, Item, Source
from mnemosyne.library.services import advisory_lock, delete_item
from mnemosyne.profiles.identity import InvalidIdentity, parse_given
from mnemosyne.storage import ChunkStore, get_chunk_store

logger = logging.getLogger(__name__)
CANCELLED = "cancelled before it finished; the documents it had finished are kept"


def sync_source(
    source: Source,
    *,
    embedder: Embedder | None = None,
    store: ChunkStore | None = None,
    report: Callable[[str], None] = lambda line: None,
) -> RunReport:
    """Bring the source's collection up to date with it; SourceUnavailable when it cannot be listed
    (recorded on the source too)."""
    with advisory_lock(f"source\x00{source.pk}", wait=False) as held:
        if not held:
            return RunReport(busy="skipped: another sync of this source is running")
        return _sync(source, embedder or get_embedder(), store or get_chunk_store(), report)


def _sync(source: Source, embedder: Embedder, store: ChunkStore, report: Callable[[str], None]) -> RunReport:
    Source.objects.filter(pk=source.pk).update(last_status="running")
    try:
        return _synced(source, embedder, store, report)
    except SourceUnavailable as exc:
        _record(source, status="failed", error=str(exc), counts={}, manifest=None, commit=None)
        raise
    except cancellation.Cancelled:
        _record(source, status="cancelled", error=CANCELLED, counts={}, manifest=None, commit=None)
        raise
    except Exception as exc:
        # Never left "running": the items are what the pipeline committed, one item at a time.
        logger.exception("sync of source %s failed", source.uid)
        error = f"internal error ({type(exc).__name__}); see the server log"
        _record(source, status="failed", error=error, counts={}, manifest=None, commit=None)
        raise


def _synced(
    source: Source, embedder: Embedder, store: ChunkStore, report: Callable[[str], None]
) -> RunReport:
    listing = list_files(source)
    result = RunReport()
    collection = source.collection
    seen: dict[str, dict[str, str]] = dict(source.manifest or {})
    # Its items: those it synced, and any already named like one of its files (ingested before).
    ours = Item.objects.filter(collection=collection, origin=source)
    named = Item.objects.filter(collection=collection, source__in=list(listing.files))
    known = {item.source: item for item in ours.union(named)}
    manifest: dict[str, dict[str, str]] = {}
    # Files whose fingerprint changed: each read once, as it is ingested (intake.read_input), so
    # a large directory is never held in memory at once.
    changed: list[Listed] = []
    for name, listed in listing.files.items():
        before, item = seen.get(name), known.get(name)
        fresh = item is not None and item.embedding_status == EmbeddingStatus.COMPLETE
        if before and before["f"] == listed.fingerprint and fresh:
            manifest[name] = before
            result.results.append(IngestResult(name, Outcome.UNCHANGED))
            continue
        changed.append(listed)
    gone = {
        name: item
        for name, item in known.items()
        if name not in listing.files and name not in listing.unreadable
    }
    _ingest(source, changed, known, gone, manifest, result, embedder, store, report)
    for name, item in sorted(gone.items()):
        try:
            delete_item(item_uid=item.uid, dry_run=False, store=store)
        except NotFound:
            continue
        result.deleted.append(name)
        report(f"deleted {name}")
    Item.objects.filter(collection=collection, source__in=list(manifest), origin__isnull=True).update(
        origin=source
    )
    for skipped in listing.skipped:
        result.skipped.append(skipped)
        report(f"skipped {skipped.path}: {skipped.reason}")
    for name in sorted(listing.unreadable):
        _failed(result, report, name, "could not be fetched this time; its item is kept")
    manifest.update({name: seen[name] for name in listing.unreadable if name in seen})
    status = "partial" if result.counts()["failed"] else "ok"
    _record(
        source,
        status=status,
        error="; ".join(result.errors()[:20]),
        counts=result.counts(),
        manifest=manifest,
        commit=listing.commit,
    )
    return result


def _ingest(
    source: Source,
    changed: list[Listed],
    known: dict[str, Item],
    gone: dict[str, Item],
    manifest: dict[str, dict[str, str]],
    result: RunReport,
    embedder: Embedder,
    store: ChunkStore,
    report: Callable[[str], None],
) -> None:
    """Read each changed file once: a new file with the content of a file that went away renames
    that file's item (nothing re-embedded), an item already up to date with the bytes is unchanged,
    the rest goes through the ingest pipeline. Renamed items leave `gone`."""
    collection = source.collection
    given = source_given(source)
    by_digest = {item.content_hash: name for name, item in gone.items() if item.content_hash}
    fingerprints = {listed.name: listed.fingerprint for listed in changed}
    digests: dict[str, str] = {}
    renamed: set[str] = set()

    def rename(item: Item, old: str, new: str) -> None:
        fields: dict[str, object] = {"source": new}
        if item.title == title_from_filename(PurePosixPath(old).name):
            fields["title"] = title_from_filename(PurePosixPath(new).name)
        Item.objects.filter(pk=item.pk).update(**fields)
        renamed.add(new)
        result.renamed.append(new)
        report(f"renamed {old} → {new}")

    def already(name: str, digest: str) -> IngestResult | None:
        """The item these bytes already are: renamed from a file that went away, or up to date."""
        digests[name] = digest
        old = by_digest.pop(digest, None) if name not in known else None
        if old is not None:
            rename(gone.pop(old), old, name)
            return IngestResult(name, Outcome.UNCHANGED)
        return unchanged_result(
            collection=collection, source=name, digest=digest, embedder=embedder, given=given
        )

    def documents() -> Iterator[DocumentInput]:
        for done, listed in enumerate(changed):
            if _was_cancelled():
                return  # nothing more is read; the batch being embedded stops and is answered
            progress.report(f"read {done} of {len(changed)} changed files")
            filename = listed.filename or PurePosixPath(listed.name).name
            read = read_input(
                listed.name,
                lambda: Read(listed.read(), filename, {"source_uid": source.uid}),  # noqa: B023
                unchanged=already,
                given=given,
            )
            if isinstance(read, Refused):
                _failed(result, report, listed.name, read.reason)
                continue
            if isinstance(read, IngestResult):
                manifest[listed.name] = {"f": listed.fingerprint, "h": digests[listed.name]}
                if listed.name not in renamed:
                    result.results.append(read)
                continue
            yield read

    for outcome in ingest_documents(
        collection=collection, documents=documents(), embedder=embedder, store=store
    ):
        if outcome.outcome == Outcome.FAILED and _was_cancelled():
            # Stopped before its chunks were written: a new item goes again, as an upload's; one
            # that was there keeps its chunks (the pipeline's _stopped).
            if outcome.source not in known and outcome.item_uid is not None:
                delete_item(item_uid=outcome.item_uid, dry_run=False, store=store)
            continue
        if outcome.outcome == Outcome.FAILED:
            _failed(result, report, outcome.source, outcome.error or "failed")
            continue
        manifest[outcome.source] = {"f": fingerprints[outcome.source], "h": digests[outcome.source]}
        result.results.append(outcome)
        if outcome.outcome != Outcome.UNCHANGED:
            report(f"{outcome.outcome.value} {outcome.source} ({outcome.chunk_count} chunks)")
    cancellation.check()


def _was_cancelled() -> bool:
    token = cancellation.current()
    return token is not None and token.cancelled


def source_given(source: Source) -> dict[str, object]:
    """What a source says its documents are (`add_source --meta`); a value that no longer reads
    (edited by hand in the admin, say) is left out, and the rest kept."""
    given: dict[str, object] = {}
    for key, value in (source.document or {}).items():
        try:
            given |= parse_given({key: value})
        except InvalidIdentity:
            logger.warning("source %s: its document metadata %s=%r is not used", source.uid, key, value)
    return given


def _failed(result: RunReport, report: Callable[[str], None], name: str, reason: str) -> None:
    result.results.append(IngestResult(name, Outcome.FAILED, error=reason))
    report(f"failed {name}: {reason}")


def _record(
    source: Source,
    *,
    status: str,
    error: str,
    counts: dict[str, int],
    manifest: dict[str, dict[str, str]] | None,
    commit: str | None,
) -> None:
    fields: dict[str, object] = {
        "last_status": status,
        "last_error": error,
        "last_counts": counts,
        "last_sync_at": timezone.now(),
    }
    if manifest is not None:
        fields["manifest"] = manifest
    if commit is not None:
        fields["last_commit"] = commit
    Source.objects.filter(pk=source.pk).update(**fields)
