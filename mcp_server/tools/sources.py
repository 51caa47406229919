"""sync_source: bring a collection up to date with one of its sources, in the background."""

from typing import Literal

from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from access.principal import Principal
from mcp_server.tools.schemas import CollectionRef
from mcp_server.tools.spec import Arguments, ToolSpec
from mnemosyne.ingestion import tasks
from mnemosyne.ingestion.sync_jobs import source_name
from mnemosyne.library import selectors
from mnemosyne.library.models import IngestJob

# It adds, replaces and deletes items (those whose file is gone); a second sync finds nothing new;
# a website source reaches beyond the libraries.
SYNC = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=True
)


class SyncSourceArguments(Arguments):
    source_uid: str = Field(
        min_length=1,
        max_length=64,
        description="The source (source_uid, as get_ingestion_status lists them).",
    )


class SyncCounts(BaseModel):
    created: int
    updated: int
    unchanged: int
    renamed: int
    deleted: int
    failed: int
    skipped: int


class SyncResult(BaseModel):
    job_id: str = Field(description="The sync's job: follow it with get_ingestion_status (job_id).")
    status: Literal["queued", "complete"] = Field(
        description="queued: a background worker syncs it; complete: it ended (counts say what it did)."
    )
    source_uid: str
    name: str = Field(description="The source: a directory's name, or a website's address.")
    collection: CollectionRef
    counts: SyncCounts | None = Field(
        default=None, description="What the sync did, once complete; null while queued."
    )
    errors: str = Field(default="", description="The files that failed and why, once complete.")


def sync_source(caller: Principal, args: SyncSourceArguments) -> SyncResult:
    source = selectors.get_source(args.source_uid)
    job = tasks.enqueue_sync(source, requested_by=caller.caller_key)
    return synced(job)


def synced(job: IngestJob) -> SyncResult:
    """What sync_source answers for its job: queued, or (as a task's result) complete."""
    source = job.source
    complete = job.status == IngestJob.Status.COMPLETE
    return SyncResult(
        job_id=job.uid,
        status="complete" if complete else "queued",
        source_uid=source.uid if source is not None else "",
        name=source_name(source) if source is not None else job.title,
        collection=CollectionRef(uid=job.collection.uid, name=job.collection.name),
        counts=SyncCounts.model_validate({**dict.fromkeys(SyncCounts.model_fields, 0), **job.counts})
        if complete
        else None,
        errors=job.error if complete else "",
    )


def render_sync(result: SyncResult) -> str:
    if result.counts is None:
        return (
            f"Queued a sync of {result.name} into {result.collection.name} (job {result.job_id}); "
            "follow it with get_ingestion_status."
        )
    counts = ", ".join(f"{count} {what}" for what, count in result.counts.model_dump().items() if count)
    errors = f" Failed: {result.errors}" if result.errors else ""
    return f"Synced {result.name} into {result.collection.name}: {counts or 'nothing changed'}.{errors}"


SYNC_SOURCE = ToolSpec(
    name="sync_source",
    handler=sync_source,
    arguments=SyncSourceArguments,
    result=SyncResult,
    title="Sync a source now",
    description=(
        "Bring a collection up to date with one of its sources (a directory, git working tree, S3 prefix or "
        "website; get_ingestion_status lists them): new and changed files are ingested, moved ones renamed, "
        "items whose file is gone deleted. A background worker runs it: the answer is a job_id to follow "
        "with get_ingestion_status (a client with MCP tasks gets a task). Needs a token allowed to write "
        "the source's library."
    ),
    render=render_sync,
    annotations=SYNC.model_copy(),
    writes=True,
)
