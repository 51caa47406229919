"""Write tools: upsert_item (ingest one document) and delete_item (dry run by default)."""

import base64
import binascii
from typing import Literal

from django.conf import settings
from pydantic import BaseModel, Field

from access.principal import Principal
from mcp_server.tools.schemas import CollectionRef, LibraryRef
from mcp_server.tools.spec import DESTRUCTIVE_IDEMPOTENT_WRITE, ArgumentError, Arguments, ToolSpec
from mnemosyne.embedding import get_embedder
from mnemosyne.ingestion import formats, tasks, uploads
from mnemosyne.ingestion.outcomes import Outcome
from mnemosyne.library import selectors, services
from mnemosyne.library.models import Item
from mnemosyne.storage import get_chunk_store

TEXT_MIME_TYPES = formats.TEXT_MIME_TYPES
# A failed ingestion raises instead of returning.
STATUS_OF: dict[Outcome, Literal["created", "updated", "unchanged"]] = {
    Outcome.CREATED: "created",
    Outcome.UPDATED: "updated",
    Outcome.UNCHANGED: "unchanged",
}
MetadataValue = str | int | float | bool | None


class UpsertResult(BaseModel):
    item_uid: str | None = Field(description="The item; null while its job is queued (see job_id).")
    status: Literal["created", "updated", "unchanged", "queued"] = Field(
        description="created (new item), updated (content, title or metadata changed), unchanged, or "
        "queued: a background worker ingests it; follow job_id with get_ingestion_status."
    )
    job_id: str | None = Field(default=None, description="The upload job, when the document was queued.")
    chunk_count: int = Field(description="Chunks the item is indexed as (0 while queued).")
    title: str
    item_type: str = Field(description="How the content was parsed (or will be): markdown, pdf, docx, …")
    external_id: str | None = Field(description="The caller's id, when one was given.")
    source: str = Field(
        description="The item's identity in the collection: external:<id> or content:<digest>."
    )
    embedding_status: str = Field(description="complete once searchable; pending while queued.")
    collection: CollectionRef


class DocumentMetadata(Arguments):
    organisation: str | None = Field(
        default=None, min_length=1, max_length=300, description="Its organisation."
    )
    doc_type: str | None = Field(
        default=None,
        min_length=1,
        max_length=40,
        description="Its kind: 10-K, 10-Q, 8-K, 20-F, earnings release, paper, manual, …",
    )
    date: str | None = Field(
        default=None, pattern=r"^\d{4}-\d{2}-\d{2}$", description="The date it speaks for, YYYY-MM-DD."
    )
    period: str | None = Field(
        default=None,
        pattern=r"^(?:Q[1-4] )?(?:FY)?\d{4}$",
        description="The fiscal period it covers: FY2019, or Q3 FY2023.",
    )


class UpsertItemArguments(Arguments):
    collection_uid: str = Field(description="The collection to write to (uid from list_collections).")
    title: str = Field(min_length=1, max_length=500, description="The item's title, shown in citations.")
    text: str | None = Field(
        default=None,
        description="The document as text (Markdown unless mime_type says otherwise). Or content_base64.",
    )
    content_base64: str | None = Field(
        default=None,
        description="The document's bytes, base64-encoded (PDF, DOCX, image…); needs mime_type. Or text.",
    )
    mime_type: str | None = Field(
        default=None,
        max_length=200,
        description=f"Type of the content: {', '.join(formats.UPLOAD_MIME_TYPES)}. Defaults to "
        "text/markdown for text.",
    )
    external_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=500,
        description="Your stable id for the document: a later call with the same id replaces it. Without "
        "one the content itself is the identity (same bytes, same item).",
    )
    metadata: dict[str, MetadataValue] | None = Field(
        default=None, description="Flat key-value metadata kept with the item (strings, numbers, booleans)."
    )
    document: DocumentMetadata | None = Field(
        default=None,
        description="What the document is, when you know better than its cover says (each optional): "
        "organisation, doc_type, date, period. Read from the document when not given.",
    )
    background: bool | None = Field(
        default=None,
        description="true: queue it for a background worker and return a job_id at once; false: ingest "
        "it now. Default: documents over UPSERT_BACKGROUND_BYTES (1 MiB) are queued.",
    )


def upsert_item(caller: Principal, args: UpsertItemArguments) -> UpsertResult:
    text, mime_type = args.text, args.mime_type
    if (text is None) == (args.content_base64 is None):
        raise ArgumentError("text", "give exactly one of text and content_base64")
    if text is not None:
        mime_type = mime_type or "text/markdown"
        if mime_type not in TEXT_MIME_TYPES:
            raise ArgumentError("mime_type", f"with text it must be one of {', '.join(TEXT_MIME_TYPES)}")
        content = text.encode("utf-8")
    else:
        if mime_type is None:
            raise ArgumentError("mime_type", "required with content_base64")
        try:
            content = base64.b64decode(args.content_base64 or "", validate=True)
        except (binascii.Error, ValueError):
            raise ArgumentError("content_base64", "not valid base64") from None
    collection = selectors.get_collection(args.collection_uid)
    queued = (
        args.background if args.background is not None else len(content) > settings.UPSERT_BACKGROUND_BYTES
    )
    if queued:
        job = tasks.enqueue_upload(
            collection=collection,
            title=args.title,
            content=content,
            mime_type=mime_type,
            external_id=args.external_id,
            metadata=args.metadata,
            document=args.document.model_dump(exclude_none=True) if args.document else None,
            requested_by=caller.caller_key,
        )
        found = formats.by_mime_type(mime_type)
        return UpsertResult(
            item_uid=None,
            status="queued",
            job_id=job.uid,
            chunk_count=0,
            title=job.title,
            item_type=found.item_type if found else "",
            external_id=args.external_id,
            source=uploads.upsert_source(external_id=args.external_id, content=content),
            embedding_status="pending",
            collection=CollectionRef(uid=collection.uid, name=collection.name),
        )
    outcome = uploads.upsert_item(
        collection=collection,
        title=args.title,
        content=content,
        mime_type=mime_type,
        external_id=args.external_id,
        metadata=args.metadata,
        document=args.document.model_dump(exclude_none=True) if args.document else None,
        embedder=get_embedder(),
        store=get_chunk_store(),
    )
    return upserted(outcome.item, STATUS_OF[outcome.outcome], outcome.chunk_count, args.external_id)


def upserted(item: Item, status: str, chunk_count: int, external_id: str | None) -> UpsertResult:
    """What upsert_item answers for an item it wrote (now, or in a background job: mcp_tasks.py)."""
    return UpsertResult(
        item_uid=item.uid,
        status=status,  # type: ignore[arg-type]
        chunk_count=chunk_count,
        title=item.title,
        item_type=item.item_type,
        external_id=external_id,
        source=item.source,
        embedding_status=item.embedding_status,
        collection=CollectionRef(uid=item.collection.uid, name=item.collection.name),
    )


def render_upsert(result: UpsertResult) -> str:
    if result.job_id is not None:
        return (
            f"Queued {result.title} for {result.collection.name} as job {result.job_id}; "
            "get_ingestion_status(job_id) tells when it is searchable or why it failed."
        )
    return (
        f"{result.status.capitalize()} [{result.item_uid}] {result.title} in {result.collection.name}: "
        f"{result.chunk_count} chunks, {result.embedding_status}."
    )


class DeleteResult(BaseModel):
    item_uid: str
    title: str
    source: str
    collection: CollectionRef
    library: LibraryRef
    chunk_count: int = Field(description="Chunks that go with the item (text and image).")
    image_chunk_count: int
    dry_run: bool
    deleted: bool = Field(description="True once the item is gone; false on a dry run.")
    storage_cleaned: bool = Field(
        description="Whether the stored chunk text and images were removed too (false on a dry run)."
    )


class DeleteItemArguments(Arguments):
    item_uid: str = Field(description="The item to delete (uid from list_items or search results).")
    dry_run: bool = Field(
        default=True,
        description="true (the default): only report what would be deleted. false (the JSON boolean, "
        "nothing else): delete it.",
    )


def delete_item(caller: Principal, args: DeleteItemArguments) -> DeleteResult:
    dry_run = args.dry_run
    report = services.delete_item(item_uid=args.item_uid, dry_run=dry_run, store=get_chunk_store())
    item = report.item
    return DeleteResult(
        item_uid=item.uid,
        title=item.title,
        source=item.source,
        collection=CollectionRef(uid=item.collection.uid, name=item.collection.name),
        library=LibraryRef(uid=item.collection.library.uid, name=item.collection.library.name),
        chunk_count=report.chunk_count,
        image_chunk_count=report.image_chunk_count,
        dry_run=dry_run,
        deleted=report.deleted,
        storage_cleaned=report.storage_cleaned,
    )


def render_delete(result: DeleteResult) -> str:
    what = f"[{result.item_uid}] {result.title} ({result.chunk_count} chunks) from {result.collection.name}"
    if result.dry_run:
        return f"Dry run: would delete {what}. Call again with dry_run=false to delete."
    note = "" if result.storage_cleaned else " (stored chunk text could not be removed; see server log)"
    return f"Deleted {what}{note}."


UPSERT_ITEM = ToolSpec(
    name="upsert_item",
    handler=upsert_item,
    arguments=UpsertItemArguments,
    result=UpsertResult,
    title="Add or replace a document",
    description=(
        "Ingest one document into a collection through the normal pipeline (parse, chunk, embed, index), "
        "so it becomes searchable at once. Give text (Markdown, plain text or HTML) or content_base64 with "
        f"mime_type (formats: {', '.join(dict.fromkeys(f.item_type for f in formats.FORMATS))}). With "
        "external_id the call is an upsert: the same id replaces that item, an unchanged document is left "
        "as is. Without it the content is the identity, so repeating a call never duplicates. A large "
        "document (or background=true) is queued: the answer carries a job_id for get_ingestion_status. "
        "Refused "
        "before anything is written: unsupported mime_type, content over the size limit, unreadable or "
        "empty content. Needs a token allowed to write."
    ),
    render=render_upsert,
    annotations=DESTRUCTIVE_IDEMPOTENT_WRITE.model_copy(),
    writes=True,
    # 1.1: background / job_id, status "queued" with a null item_uid.
    version="1.1",
)
DELETE_ITEM = ToolSpec(
    name="delete_item",
    handler=delete_item,
    arguments=DeleteItemArguments,
    result=DeleteResult,
    title="Delete a document",
    description=(
        "Delete one item with its chunks, concept mentions and stored text. By default a dry run that only "
        "reports what would go (title, collection, chunk counts); call again with dry_run=false to delete. "
        "Needs a token allowed to write."
    ),
    render=render_delete,
    annotations=DESTRUCTIVE_IDEMPOTENT_WRITE.model_copy(),
    writes=True,
)
