"""The corpus: libraries → collections → items → chunks, a paged document's pages, and the
full-text index's terms and postings."""

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
            # the index-ordered reads leave cold. Keyed by chunk, then term: a candidate's
            # postings of a few terms are one probe, not a read of all its postings.
            models.Index(fields=["chunk", "term"], include=["tf", "dl"], name="posting_by_chunk_term"),
        ]
