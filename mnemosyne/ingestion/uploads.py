"""Uploads: one document handed over as bytes (the `upsert_item` tool), ingested through the pipeline."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings

from mnemosyne.embedding import Embedder
from mnemosyne.ingestion import formats
from mnemosyne.ingestion.documents import DocumentInput
from mnemosyne.ingestion.intake import Read, Refused, read_input
from mnemosyne.ingestion.outcomes import Outcome
from mnemosyne.ingestion.pipeline import ingest_document
from mnemosyne.lib import cancellation, progress
from mnemosyne.library import services
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import Collection, Item
from mnemosyne.library.services import delete_item
from mnemosyne.profiles.identity import InvalidIdentity, given_as_text, parse_given
from mnemosyne.storage import ChunkStore

MAX_EXTERNAL_ID_CHARS = 500


@dataclass(frozen=True)
class Upserted:
    item: Item
    outcome: Outcome  # created, updated or unchanged
    chunk_count: int


def upsert_source(*, external_id: str | None, content: bytes) -> str:
    """The item's identity in its collection: the caller's id, or else the content's digest.

    Without an external id the same bytes are the same item, so repeating a call never duplicates.
    """
    if external_id is None:
        return f"content:{hashlib.sha256(content).hexdigest()[:32]}"
    external_id = external_id.strip()
    if not external_id or len(external_id) > MAX_EXTERNAL_ID_CHARS or not external_id.isprintable():
        raise InvalidArgument(f"external_id must be 1-{MAX_EXTERNAL_ID_CHARS} printable characters")
    return f"external:{external_id}"


def check_upload(*, title: str, content: bytes, mime_type: str) -> tuple[str, formats.Format]:
    """The title (stripped) and format of an upload, or InvalidArgument saying why it is refused."""
    title = title.strip()
    if not title:
        raise InvalidArgument("title must not be empty")
    limit = settings.INGEST_MAX_FILE_BYTES
    if len(content) > limit:
        raise InvalidArgument(f"the content is {len(content)} bytes, over INGEST_MAX_FILE_BYTES ({limit})")
    found = formats.by_mime_type(mime_type)
    if found is None:
        raise InvalidArgument(
            f"unsupported mime_type {mime_type!r}; supported: {', '.join(formats.UPLOAD_MIME_TYPES)}"
        )
    return title, found


def check_document(document: Mapping[str, object] | None, *, title: str) -> dict[str, object]:
    """An upload's document metadata checked (InvalidArgument saying what is wrong), its title
    given with it."""
    try:
        return parse_given({**(document or {}), "title": title})
    except InvalidIdentity as exc:
        raise InvalidArgument(str(exc)) from exc


def upsert_item(
    *,
    collection: Collection,
    title: str,
    content: bytes,
    mime_type: str,
    embedder: Embedder,
    store: ChunkStore,
    external_id: str | None = None,
    metadata: Mapping[str, object] | None = None,
    document: Mapping[str, object] | None = None,
) -> Upserted:
    """Create or replace one item through the ingest pipeline (which writes it in one transaction).

    Everything that can be refused (size, type, unreadable or empty content, document metadata
    that does not read) is refused before anything is written; a new item whose ingestion still
    fails is removed again. The title is the caller's, and so is `document` (what the document
    is: organisation, doc_type, date, period), over what is read from the document.
    """
    title, found = check_upload(title=title, content=content, mime_type=mime_type)
    given = check_document(document, title=title)
    source = upsert_source(external_id=external_id, content=content)
    # Named after the title: a parser falls back on the file name (e.g. an image without a caption).
    stem = re.sub(r"[^\w\- ]+", " ", title).strip()[:100] or "upload"
    user_metadata = dict(metadata or {})

    def digest_of(data: bytes) -> str:
        # Title and metadata are part of the digest: changing either updates the item.
        return hashlib.sha256(
            json.dumps([title, user_metadata, given_as_text(given)], sort_keys=True, default=str).encode()
            + hashlib.sha256(data).digest()
        ).hexdigest()

    read = read_input(
        source, lambda: Read(content, f"{stem}{found.suffixes[0]}"), given=given, digest_of=digest_of
    )
    if isinstance(read, Refused):
        raise InvalidArgument(f"cannot ingest the content: {read.reason}")
    # Read: a cancelled upload stops here, before anything is written.
    cancellation.check()
    progress.report("read the document; embedding its chunks")
    assert isinstance(read, DocumentInput)  # no `unchanged` lookup: never an earlier result
    parsed, digest = read.parsed, read.digest
    # Uploads of one item run one at a time: the same call made twice at once creates the item
    # once, and the second finds it done (unchanged) instead of reporting it created too.
    with services.item_lock(collection_id=collection.pk, source=source):
        existed = Item.objects.filter(collection=collection, source=source).exists()
        result = ingest_document(
            collection=collection,
            source=source,
            parsed=dataclasses.replace(parsed, title=title[:500]),
            digest=digest,
            embedder=embedder,
            store=store,
            metadata={"external_id": external_id, "mime_type": mime_type, "metadata": user_metadata},
            given=given,
            original=content,
        )
        if result.outcome == Outcome.FAILED:
            if not existed and result.item_uid is not None:
                delete_item(item_uid=result.item_uid, dry_run=False, store=store)
            raise InvalidArgument(f"ingestion failed: {result.error}")
    item = Item.objects.select_related("collection", "collection__library").get(uid=result.item_uid)
    return Upserted(item=item, outcome=result.outcome, chunk_count=result.chunk_count)
