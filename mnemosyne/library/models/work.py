"""Work done in the background and followed: sources kept in sync, ingest and re-embedding jobs,
and the workers' heartbeats."""

from __future__ import annotations

from django.db import models

from mnemosyne.lib import uids
from mnemosyne.library.models.corpus import Collection, Item, Library


class Source(models.Model):
    """Where a collection's documents live and are kept in sync from: a directory, a git working
    tree (its committed files), or an S3 bucket prefix. `manage.py sync` (or a schedule run by
    db_worker) ingests what is new or changed, renames what moved, deletes what is gone."""

    class Kind(models.TextChoices):
        DIRECTORY = "directory", "Directory"
        GIT = "git", "Git working tree"
        S3 = "s3", "S3 bucket prefix"
        WEB = "web", "Website"

    uid = models.CharField(max_length=32, unique=True, default=uids.new_source_uid, editable=False)
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="sources")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    location = models.CharField(
        max_length=2000,
        help_text="An absolute path, s3://bucket/prefix, or a website's start page or sitemap URL.",
    )
    # gitignore-style patterns, relative to the location: only files matching `include` (all when
    # empty), less those matching `exclude`.
    include = models.JSONField(default=list, blank=True)
    exclude = models.JSONField(default=list, blank=True)
    # A website: pages at most, and links followed at most from the start page (a sitemap lists them).
    max_pages = models.PositiveIntegerField(default=200)
    max_depth = models.PositiveIntegerField(default=3)
    # Minutes between scheduled syncs run by the background workers; empty: only when asked.
    every_minutes = models.PositiveIntegerField(null=True, blank=True)
    # What its documents are, over what is read from them (profiles/identity.py: organisation,
    # doc_type, date, period, title), as `add_source --meta` gives it.
    document = models.JSONField(default=dict, blank=True)
    # What the last sync saw, per file (relative path → stat and digest, or git blob): the next one
    # reads only what changed.
    manifest = models.JSONField(default=dict, blank=True, editable=False)
    last_commit = models.CharField(max_length=64, blank=True, default="", editable=False)
    last_sync_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_status = models.CharField(max_length=16, blank=True, default="", editable=False)
    last_error = models.TextField(blank=True, default="", editable=False)
    # added, updated, unchanged, renamed, deleted, failed: of the last sync.
    last_counts = models.JSONField(default=dict, blank=True, editable=False)
    next_sync_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["collection_id", "location"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "location"], name="source_location_unique_in_collection"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.location}"


class WorkStatus(models.TextChoices):
    """Where background work someone follows is (an IngestJob, a ReembedJob; ingestion/job_watch.py)."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    COMPLETE = "complete", "Complete"
    FAILED = "failed", "Failed"
    # Cancelled by whoever asked for it, before or while it ran.
    CANCELLED = "cancelled", "Cancelled"


class IngestJob(models.Model):
    """Background ingestion someone follows: an upload queued for a worker (`upsert_item` of a
    large document: what was sent, until it is ingested, and then what became of it — never dropped
    without a reason), or a sync of a source asked for (`sync_source`, the console's "Sync now")."""

    class Kind(models.TextChoices):
        UPLOAD = "upload", "Upload"
        SYNC = "sync", "Sync of a source"

    Status = WorkStatus

    uid = models.CharField(max_length=32, unique=True, default=uids.new_job_uid, editable=False)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.UPLOAD)
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="jobs")
    # A sync: its source (the job outlives it), and what it did once it ended (RunReport.counts).
    source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs")
    counts = models.JSONField(default=dict, blank=True)
    title = models.CharField(max_length=500)
    mime_type = models.CharField(max_length=200)
    external_id = models.CharField(max_length=500, null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    # What the document is, as upsert_item's `document` gives it (profiles/identity.py).
    document = models.JSONField(default=dict, blank=True)
    # The uploaded bytes, until the job is done.
    content = models.BinaryField(default=b"", editable=False)
    size = models.PositiveBigIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True, default="")
    item = models.ForeignKey(Item, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # created, updated or unchanged, once complete.
    outcome = models.CharField(max_length=16, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Who asked for it (access.principal's caller_key): only they follow it as an MCP task.
    requested_by = models.CharField(max_length=200, blank=True, default="")
    # Where the work is, in words ("embedding 256 of 812 chunks"), and when it last moved.
    progress = models.CharField(max_length=200, blank=True, default="")
    updated_at = models.DateTimeField(null=True, blank=True)
    # Asked to stop while running: the worker stops at its next step and keeps nothing.
    cancel_requested = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "created_at"], name="ingest_job_status_created")]

    def __str__(self) -> str:
        return f"{self.uid} {self.title} ({self.status})"


class ReembedJob(models.Model):
    """A library's chunks embedded again with the server's model (`reembed_library`), run by a
    background worker (ingestion/reembed_jobs.py): the new vectors built beside the old, then one
    switch (reembedding.py). Cancelled before the switch, nothing of the library changed."""

    Status = WorkStatus

    uid = models.CharField(max_length=32, unique=True, default=uids.new_reembed_job_uid, editable=False)
    library = models.ForeignKey(Library, on_delete=models.CASCADE, related_name="reembed_jobs")
    # The model it embeds with, and the one the library had when it was asked for.
    model = models.CharField(max_length=500)
    model_before = models.CharField(max_length=500, blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.CharField(max_length=200, blank=True, default="")
    done = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    requested_by = models.CharField(max_length=200, blank=True, default="")
    cancel_requested = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.uid} {self.model} ({self.status})"


class WorkerBeat(models.Model):
    """A background worker's heartbeat (ingestion/worker_beats.py): one row per `db_worker` process."""

    name = models.CharField(max_length=200, unique=True, help_text="host:pid")
    started_at = models.DateTimeField(auto_now_add=True)
    seen_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.name
