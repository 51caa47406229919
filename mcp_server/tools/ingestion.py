"""get_ingestion_status: whether ingestion finished, and why it failed (items and upload jobs)."""

from datetime import datetime
from pathlib import PurePath
from typing import Literal

from pydantic import BaseModel, Field

from access.principal import Principal
from mcp_server.tools.schemas import CollectionRef
from mcp_server.tools.spec import Arguments, ToolSpec
from mnemosyne.ingestion.status import IngestionStatus, ingestion_status


class ItemStatus(BaseModel):
    item_uid: str
    title: str
    source: str
    collection: CollectionRef
    status: str = Field(description="pending, processing, complete or failed.")
    error: str = Field(description="Why it failed (empty unless failed).")
    chunk_count: int
    updated_at: datetime


class JobStatus(BaseModel):
    job_id: str
    kind: Literal["upload", "sync"] = Field(
        default="upload", description="upload (upsert_item) or sync (sync_source, a console's Sync now)."
    )
    title: str
    collection: CollectionRef
    status: str = Field(description="queued, running, complete, failed or cancelled.")
    progress: str = Field(
        default="",
        description="Where it is, in words, e.g. 'embedded 256 of 812 chunks' (empty when not known).",
    )
    error: str = Field(description="Why it failed or that it was cancelled (empty otherwise).")
    item_uid: str | None = Field(description="The item it created or updated, once complete.")
    outcome: str = Field(description="created, updated or unchanged, once complete.")
    size: int = Field(description="Bytes uploaded (0 for a sync).")
    source_uid: str | None = Field(default=None, description="The source a sync job syncs.")
    counts: dict[str, int] = Field(
        default_factory=dict,
        description="What a sync did, once complete: created, updated, unchanged, renamed, deleted, "
        "failed, skipped.",
    )
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    note: str = Field(description="A warning, e.g. that no worker has started it.")


class SourceState(BaseModel):
    source_uid: str
    kind: str = Field(description="directory or git.")
    name: str = Field(description="The source's directory name (items are named after it).")
    collection: CollectionRef
    every_minutes: int | None = Field(description="Scheduled syncs, in minutes; null: only when asked.")
    last_sync_at: datetime | None
    last_status: str = Field(
        description="ok, partial (some files failed), failed, running, or empty (never)."
    )
    last_counts: dict[str, int] = Field(
        description="created, updated, unchanged, renamed, deleted, failed (older syncs: added)."
    )
    last_error: str = Field(description="Why the last sync failed, or which files did.")


class IngestionReport(BaseModel):
    counts: dict[str, int] = Field(description="Items per status in the scope asked (empty for one job).")
    items: list[ItemStatus] = Field(
        description="Items of the status asked; by default the unfinished and failed."
    )
    sources: list[SourceState] = Field(
        default_factory=list, description="Sources kept in sync, with their last sync."
    )
    jobs: list[JobStatus] = Field(
        description="Upload and sync jobs: unfinished and failed ones, and those done in the last hour."
    )


class IngestionStatusArguments(Arguments):
    job_id: str | None = Field(default=None, description="One job (job_id from upsert_item or sync_source).")
    collection_uid: str | None = Field(default=None, description="Only this collection.")
    library_uid: str | None = Field(default=None, description="Only this library.")
    status: Literal["pending", "processing", "complete", "failed"] | None = Field(
        default=None, description="Only items (and jobs) in this state; default: every state but complete."
    )
    limit: int = Field(default=20, ge=1, le=100, description="How many items and jobs at most, 1-100.")


def get_ingestion_status(caller: Principal, args: IngestionStatusArguments) -> IngestionReport:
    report = ingestion_status(
        job_uid=args.job_id,
        collection_uid=args.collection_uid,
        library_uid=args.library_uid,
        status=args.status,
        limit=args.limit,
    )
    return as_report(report)


def as_report(report: IngestionStatus) -> IngestionReport:
    return IngestionReport(
        counts=report.counts,
        items=[
            ItemStatus(
                item_uid=item.uid,
                title=item.title,
                source=item.source,
                collection=CollectionRef(uid=item.collection.uid, name=item.collection.name),
                status=item.embedding_status,
                error=item.embedding_error,
                chunk_count=item.chunk_count,
                updated_at=item.updated_at,
            )
            for item in report.items
        ],
        sources=[
            SourceState(
                source_uid=source.uid,
                kind=source.kind,
                name=PurePath(source.location).name,
                collection=CollectionRef(uid=source.collection.uid, name=source.collection.name),
                every_minutes=source.every_minutes,
                last_sync_at=source.last_sync_at,
                last_status=source.last_status,
                last_counts=source.last_counts or {},
                # Server paths stay on the server: the location is named by its last part.
                last_error=source.last_error.replace(source.location, PurePath(source.location).name),
            )
            for source in report.sources
        ],
        jobs=[
            JobStatus(
                job_id=state.job.uid,
                kind="sync" if state.job.kind == "sync" else "upload",
                title=state.job.title,
                collection=CollectionRef(uid=state.job.collection.uid, name=state.job.collection.name),
                status=state.job.status,
                progress=state.job.progress,
                error=state.job.error,
                item_uid=state.job.item.uid if state.job.item else None,
                outcome=state.job.outcome,
                size=state.job.size,
                source_uid=state.job.source.uid if state.job.source else None,
                counts=state.job.counts or {},
                created_at=state.job.created_at,
                started_at=state.job.started_at,
                finished_at=state.job.finished_at,
                note=state.note,
            )
            for state in report.jobs
        ],
    )


def render_status(report: IngestionReport) -> str:
    lines = []
    if report.counts:
        lines.append("Items: " + ", ".join(f"{count} {status}" for status, count in report.counts.items()))
    for item in report.items:
        reason = f": {item.error}" if item.error else ""
        lines.append(f"- [{item.item_uid}] {item.title} ({item.collection.name}): {item.status}{reason}")
    for source in report.sources:
        counts = ", ".join(f"{n} {what}" for what, n in source.last_counts.items() if n)
        when = source.last_sync_at.isoformat(timespec="seconds") if source.last_sync_at else "never"
        status = source.last_status or "not synced"
        error = f" — {source.last_error}" if source.last_error else ""
        lines.append(
            f"- source {source.source_uid} {source.kind} {source.name}: {status} "
            f"({when}{'; ' + counts if counts else ''}){error}"
        )
    for job in report.jobs:
        done = ", ".join(f"{n} {what}" for what, n in job.counts.items() if n)
        detail = job.error or job.note or (f"item {job.item_uid} {job.outcome}" if job.item_uid else done)
        lines.append(f"- job {job.job_id} {job.title}: {job.status}{f' — {detail}' if detail else ''}")
    return "\n".join(lines) or "Nothing is being ingested, and nothing failed."


GET_INGESTION_STATUS = ToolSpec(
    name="get_ingestion_status",
    handler=get_ingestion_status,
    arguments=IngestionStatusArguments,
    result=IngestionReport,
    title="Ingestion status",
    description=(
        "Whether documents finished ingesting, and why any failed: items per status (pending, processing, "
        "complete, failed with the reason), sources kept in sync (last sync, counts, errors; sync_source "
        "syncs one now) and jobs (upsert_item queues a large document, sync_source a sync, each returning "
        "its job_id: queued, running with its progress, complete with the item or the sync's counts, "
        "failed with the reason, or cancelled). Narrow it to a job, a collection or a library, or one "
        "status."
    ),
    render=render_status,
    # 1.1: jobs carry kind, source_uid and counts (sync jobs).
    version="1.1",
)
