"""Libraries → collections → items → chunks (corpus.py), the work done on them in the background
(work.py) and the query log (query_log.py): every model of the app, named here."""

from mnemosyne.library.models.corpus import (
    TEXT_PREVIEW_CHARS,
    Chunk,
    ChunkKind,
    Collection,
    EmbeddingStatus,
    Item,
    Library,
    LibraryType,
    Page,
    Posting,
    Term,
)
from mnemosyne.library.models.query_log import QueryLog, QueryLogDay
from mnemosyne.library.models.work import IngestJob, ReembedJob, Source, WorkerBeat, WorkStatus

__all__ = [
    "TEXT_PREVIEW_CHARS",
    "Chunk",
    "ChunkKind",
    "Collection",
    "EmbeddingStatus",
    "IngestJob",
    "Item",
    "Library",
    "LibraryType",
    "Page",
    "Posting",
    "QueryLog",
    "QueryLogDay",
    "ReembedJob",
    "Source",
    "Term",
    "WorkStatus",
    "WorkerBeat",
]
