"""Libraries → collections → items → chunks."""

from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.db.models.functions import Length
from django.db.models.lookups import GreaterThan
from pgvector.django import VectorField

from mnemosyne.lib import uids

TEXT_PREVIEW_CHARS = 500


class LibraryType(models.TextChoices):
    """A library's type, and so its profile (mnemosyne/profiles/catalog.py): the domain rules its
    searches and ingests run. `general` runs none."""

    GENERAL = "general", "General"
    FILINGS = "filings", "Filings and financial reports"
    DOCUMENTATION = "documentation", "Documentation"
    RESEARCH = "research", "Research papers"
    BOOKS = "books", "Books"
    LEGAL = "legal", "Legal"
    NOTES = "notes", "Notes"
    CODE = "code", "Code"


class EmbeddingStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    PROCESSING = "processing", "Processing"
    COMPLETE = "complete", "Complete"
    FAILED = "failed", "Failed"


class Library(models.Model):
    uid = models.CharField(max_length=32, unique=True, default=uids.new_library_uid, editable=False)
    name = models.CharField(max_length=200, unique=True)
    library_type = models.CharField(max_length=32, choices=LibraryType.choices, default=LibraryType.GENERAL)
    description = models.TextField(blank=True, default="")
    # ISO 639 code: picks the text-search configuration (languages.py). Changing it re-indexes.
    language = models.CharField(
        max_length=3,
        default="en",
        validators=[RegexValidator(r"^[a-z]{2,3}$", "an ISO 639 code such as en, de or ja")],
        help_text="ISO 639 code (en, de, fr, ja, …): its stemming and stop words in full-text search.",
    )
    # The model whose vectors the library's chunks hold (its Embedder.model_id) and their dimension,
    # recorded at the first write; "" until then. Queries must be embedded by the same model.
    embedding_model = models.CharField(max_length=500, blank=True, default="")
    embedding_dimensions = models.PositiveIntegerField(null=True, blank=True)
    # Whether calls that read it are kept in the query log (query_log.py; QUERY_LOG_DAYS).
    log_queries = models.BooleanField(
        default=True, help_text="Keep the searches of this library in the query log (QUERY_LOG_DAYS)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "libraries"

    def __str__(self) -> str:
        return self.name


class Collection(models.Model):
    uid = models.CharField(max_length=32, unique=True, default=uids.new_collection_uid, editable=False)
    library = models.ForeignKey(Library, on_delete=models.CASCADE, related_name="collections")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["library__name", "name"]
        constraints = [
            models.UniqueConstraint(fields=["library", "name"], name="collection_name_unique_in_library"),
        ]

    def __str__(self) -> str:
        return f"{self.library.name} / {self.name}"


class Item(models.Model):
    uid = models.CharField(max_length=32, unique=True, default=uids.new_item_uid, editable=False)
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="items")
    title = models.CharField(max_length=500)
    item_type = models.CharField(max_length=32)
    # Where the item came from: a path relative to the ingest root, or a URL.
    source = models.CharField(max_length=2000)
    content_hash = models.CharField(max_length=64, blank=True, default="")
    # The source it is kept in sync from, if any.
    origin = models.ForeignKey(
        "Source", null=True, blank=True, on_delete=models.SET_NULL, related_name="items"
    )
    metadata = models.JSONField(default=dict, blank=True)
    embedding_status = models.CharField(
        max_length=16, choices=EmbeddingStatus.choices, default=EmbeddingStatus.PENDING
    )
    embedding_error = models.TextField(blank=True, default="")
    chunk_count = models.PositiveIntegerField(default=0)
    # What the document is (profiles/identity.py): read from it at ingest, or given by a person
    # (metadata["identity"]["given"] lists those, which a re-ingest keeps).
    organisation = models.CharField(max_length=300, blank=True, default="")
    document_type = models.CharField(max_length=40, blank=True, default="")
    document_date = models.DateField(null=True, blank=True)
    period = models.CharField(max_length=40, blank=True, default="", help_text="FY2019, Q3 FY2023, …")
    # The words of its identity (organisation, symbol, kind, period), matched against a query's.
    identity_vector = SearchVectorField(null=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["title"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "source"], name="item_source_unique_in_collection"),
        ]
        indexes = [
            GinIndex(fields=["identity_vector"], name="item_identity_vector_gin"),
            # The items that have an identity (search/named_documents.py reads those for every search):
            # in a library whose documents have none, that read is one empty index scan.
            models.Index(
                fields=["collection"],
                name="item_identified",
                condition=Q(identity_vector__isnull=False) & Q(GreaterThan(Length("identity_vector"), 0)),
            ),
            # A collection's items in title order, a page at a time (the console's keyset paging).
            models.Index(fields=["collection", "title", "id"], name="item_collection_title_id"),
        ]

    def __str__(self) -> str:
        return self.title


class ChunkKind(models.TextChoices):
    TEXT = "text", "Text"
    IMAGE = "image", "Image"


class Chunk(models.Model):
    uid = models.CharField(max_length=32, unique=True, default=uids.new_chunk_uid, editable=False)
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="chunks")
    # Denormalised from the item so filters need no join inside the search legs.
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="+")
    library = models.ForeignKey(Library, on_delete=models.CASCADE, related_name="+")
    ordinal = models.PositiveIntegerField()
    # An image chunk's text is its caption; the image itself is in the ChunkStore under image_key.
    kind = models.CharField(max_length=8, choices=ChunkKind.choices, default=ChunkKind.TEXT)
    mime_type = models.CharField(max_length=100, blank=True, default="")
    image_key = models.CharField(max_length=300, blank=True, default="")
    text_preview = models.CharField(max_length=TEXT_PREVIEW_CHARS)
    search_vector = SearchVectorField(null=True)
    # The library's model's dimension (Library.embedding_dimensions); one partial HNSW index per
    # dimension in use, on embedding::vector(N) (migration 0011, vector_models.py).
    embedding = VectorField(null=True)
    section_path = models.CharField(max_length=1000, blank=True, default="")
    page = models.PositiveIntegerField(null=True, blank=True)
    # The last page a chunk runs onto, when it runs over a page break (null: it is all on `page`).
    page_end = models.PositiveIntegerField(null=True, blank=True)
    # PDF: the boxes of its lines, [page, x0, y0, x1, y1] in points from the page's bottom left
    # (an image file's OCR text: in the image's pixels).
    locations = models.JSONField(default=list, blank=True)
    # OCR'd text: the recogniser's mean confidence over its lines (0-1); null for a text layer.
    ocr_confidence = models.FloatField(null=True, blank=True)
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    token_count = models.PositiveIntegerField(default=0)
    # Key of the full text in the ChunkStore.
    storage_key = models.CharField(max_length=300)

    class Meta:
        ordering = ["item_id", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["item", "ordinal"], name="chunk_ordinal_unique_in_item"),
        ]
        indexes = [
            GinIndex(fields=["search_vector"], name="chunk_search_vector_gin"),
        ]

    def __str__(self) -> str:
        return f"{self.item.title} #{self.ordinal}"


class Page(models.Model):
    """A page of a paged document (a PDF) as one unit of full-text ranking: its whole text, under
    its document's identity and the sections it holds. Evidence spread over several chunks of
    one page adds up here (search/pages.py)."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="pages")
    library_id = models.BigIntegerField()
    collection_id = models.BigIntegerField()
    number = models.PositiveIntegerField()
    search_vector = SearchVectorField(null=True)
    # Lexeme occurrences: the page's length for BM25's length normalisation.
    length = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["item_id", "number"]
        constraints = [models.UniqueConstraint(fields=["item", "number"], name="page_number_unique_in_item")]

    def __str__(self) -> str:
        return f"{self.item.title} p. {self.number}"


class Term(models.Model):
    """A lexeme of the full-text index (english stemming, stop words removed) and its document frequency.

    document_frequency is kept current by triggers on library_posting (migration 0002).
    """

    lexeme = models.TextField(unique=True)
    document_frequency = models.IntegerField(default=0)

    def __str__(self) -> str:
        return self.lexeme


class Posting(models.Model):
    """One lexeme in one chunk: the inverted index BM25 is scored from, in plain PostgreSQL."""

    pk = models.CompositePrimaryKey("term", "chunk")
    term = models.ForeignKey(Term, on_delete=models.DO_NOTHING, related_name="+", db_index=False)
    chunk = models.ForeignKey(Chunk, on_delete=models.CASCADE, related_name="+", db_index=False)
    tf = models.IntegerField(help_text="Occurrences of the lexeme in the chunk.")
    dl = models.IntegerField(help_text="The chunk's length in lexeme occurrences.")
    # Copied from the chunk so filtered queries read only postings.
    library_id = models.BigIntegerField()
    collection_id = models.BigIntegerField()
    is_image = models.BooleanField(default=False)
    # The posting's BM25 term-frequency part, tf·(k1+1) / (tf + k1·(1 - b + b·dl/avgdl)), with the
    # k1, b and average length of when it was written. It only orders a term's postings, so the
    # full-text leg can read each query term's strongest postings first and stop; scores are
    # computed from tf, dl and the current statistics.
    impact = models.FloatField(default=0.0)

    class Meta:
        indexes = [
            models.Index(
                fields=["term", "-impact"],
                include=["chunk", "tf", "dl", "library_id", "collection_id", "is_image"],
                name="posting_by_term_impact",
            ),
            # Covering: the full-text leg rescores its candidates from this index alone, so a
            # search never reads the postings' heap (4.8 GiB at a million chunks), whose pages
            # the index-ordered reads leave cold.
            models.Index(fields=["chunk"], include=["term", "tf", "dl"], name="posting_by_chunk"),
        ]


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


class QueryLog(models.Model):
    """One tool call, as the activity views show it (query_log.py): who, over what, on which
    library, what was asked and how it went. Kept QUERY_LOG_DAYS; a library can opt out."""

    at = models.DateTimeField(db_index=True)
    tool = models.CharField(max_length=64)
    transport = models.CharField(max_length=16)
    # The token's name and owner, the signed-in person, "jwt:<sub>", "anonymous" or "local".
    caller = models.CharField(max_length=200)
    # The library the call named, or else that of its best hit; null when neither (staff see it).
    library = models.ForeignKey(Library, null=True, on_delete=models.CASCADE, related_name="+")
    query = models.TextField(blank=True, default="")
    hits = models.IntegerField(null=True)
    top_score = models.FloatField(null=True)
    ms = models.FloatField()
    # ok, error (the tool answered with an error), invalid (its arguments were refused)
    outcome = models.CharField(max_length=16)
    reason = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        indexes = [
            models.Index(fields=["library", "at"], name="querylog_library_at"),
            # The activity lists: the slowest, the lowest best scores, the searches that found nothing.
            models.Index(fields=["-ms"], name="querylog_slowest"),
            models.Index(
                fields=["top_score"], condition=models.Q(tool="search", hits__gt=0), name="querylog_lowest"
            ),
            models.Index(fields=["-at"], condition=models.Q(tool="search", hits=0), name="querylog_nothing"),
        ]

    def __str__(self) -> str:
        return f"{self.tool} {self.at:%Y-%m-%d %H:%M:%S}"


class QueryLogDay(models.Model):
    """A past day of the query log rolled up (query_log.roll_up, by the worker): calls and errors
    per tool, library and latency bucket (query_log.LATENCY_EDGES), so the activity views read a
    month in a few hundred rows instead of every call."""

    day = models.DateField()
    tool = models.CharField(max_length=64)
    library = models.ForeignKey(Library, null=True, on_delete=models.CASCADE, related_name="+")
    # width_bucket(ms, LATENCY_EDGES): 0 under the first edge, len(edges) at or over the last.
    bucket = models.SmallIntegerField()
    calls = models.IntegerField()
    errors = models.IntegerField()

    class Meta:
        indexes = [models.Index(fields=["day"], name="querylogday_day")]

    def __str__(self) -> str:
        return f"{self.day} {self.tool}"
