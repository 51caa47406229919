"""Reads of the library tree, shared by the MCP tools, commands and admin.

Every read honours the library boundary of the calling MCP token (`library_boundary`): outside it,
a library, collection, item or chunk is treated exactly like one that does not exist.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import date
from typing import TypeVar

from django.db import connection
from django.db.models import Count, Model, Q, QuerySet
from django.db.models.expressions import RawSQL

from mnemosyne.lib import prepared
from mnemosyne.library.errors import NotFound
from mnemosyne.library.models import Chunk, ChunkKind, Collection, EmbeddingStatus, Item, Library, Source
from mnemosyne.library.sections import SECTION_SEPARATOR

M = TypeVar("M", bound=Model)
# Set in the worker thread that runs one MCP call; None (the default) means every library.
_VISIBLE_LIBRARIES: ContextVar[frozenset[int] | None] = ContextVar("visible_libraries", default=None)


@contextlib.contextmanager
def library_boundary(library_ids: frozenset[int] | None) -> Iterator[None]:
    """Within the block, only these libraries (by id) exist for every read; None lifts the boundary."""
    reset = _VISIBLE_LIBRARIES.set(library_ids)
    try:
        yield
    finally:
        _VISIBLE_LIBRARIES.reset(reset)


def visible_library_ids() -> frozenset[int] | None:
    return _VISIBLE_LIBRARIES.get()


def within_boundary(queryset: QuerySet[M], library_field: str) -> QuerySet[M]:
    visible = visible_library_ids()
    return queryset if visible is None else queryset.filter(**{f"{library_field}__in": visible})


_LIBRARY_FIELD = {
    Library: "id",
    Collection: "library_id",
    Item: "collection__library_id",
    Chunk: "library_id",
    Source: "collection__library_id",
}


def _one(queryset: QuerySet[M], kind: str, uid: str) -> M:
    """The row of this uid inside the library boundary, else NotFound (worded as for any uid)."""
    found = within_boundary(queryset.filter(uid=uid), _LIBRARY_FIELD[queryset.model]).first()
    if found is None:
        raise NotFound(kind, uid)
    return found


def get_library(uid: str) -> Library:
    return _one(Library.objects.all(), "library", uid)


def get_collection(uid: str) -> Collection:
    return _one(Collection.objects.select_related("library"), "collection", uid)


def get_item(uid: str) -> Item:
    return _one(Item.objects.select_related("collection", "collection__library", "origin"), "item", uid)


def get_source(uid: str) -> Source:
    return _one(Source.objects.select_related("collection", "collection__library"), "source", uid)


def _identified(collections: str) -> str:
    """Whether an item of these collections (an SQL array) has an identity (what a question may
    name it by: search/named_documents.py) — one probe of the partial index item_identified per
    collection, stopping at the first such item."""
    return f"""EXISTS (
        SELECT 1 FROM library_item i
        WHERE i.collection_id = ANY({collections})
          AND i.identity_vector IS NOT NULL AND length(i.identity_vector) > 0
    )"""


def _library_identified(library_id: str) -> str:
    return _identified(f"ARRAY(SELECT o.id FROM library_collection o WHERE o.library_id = {library_id})")


# A library's columns by name, and the statement library_to_search reads them with: built once.
_LIBRARY_NAMES = [field.attname for field in Library._meta.concrete_fields]
_LIBRARY_COLUMNS = ", ".join(f'l."{name}"' for name in _LIBRARY_NAMES)
_LIBRARY_TO_SEARCH = (
    f"SELECT {_LIBRARY_COLUMNS}, {_library_identified('l.id')} FROM library_library l WHERE l.uid = %s"
)


def library_to_search(uid: str) -> tuple[Library, bool]:
    """get_library, and whether any of its documents has an identity — read in the same statement,
    so that a search of a library without any skips looking for the documents a question names.
    Every search scoped to a library asks: one plain statement, not an ORM query to build."""
    visible = visible_library_ids()
    with prepared.cursor(connection.alias) as cursor:
        if visible is None:
            cursor.execute(_LIBRARY_TO_SEARCH, [uid])
        else:
            cursor.execute(f"{_LIBRARY_TO_SEARCH} AND l.id = ANY(%s)", [uid, list(visible)])
        row = cursor.fetchone()
    if row is None:
        raise NotFound("library", uid)
    return Library.from_db(connection.alias, _LIBRARY_NAMES, row[:-1]), bool(row[-1])


def collection_to_search(uid: str) -> tuple[Collection, bool]:
    """get_collection, and whether any of the collection's documents has an identity."""
    identified = RawSQL(_identified('ARRAY["library_collection"."id"]'), ())
    collection = _one(
        Collection.objects.select_related("library").annotate(identified=identified), "collection", uid
    )
    return collection, bool(collection.identified)  # type: ignore[attr-defined]


def library_ids_of_type(library_type: str) -> list[int]:
    """Ids of the libraries of one type (the library boundary is applied by the caller)."""
    return list(Library.objects.filter(library_type=library_type).values_list("id", flat=True))


@dataclass(frozen=True)
class LibraryTraits:
    """What a search needs of the libraries it reads: their languages (text-search configurations),
    the embedding models of their vectors ("" for none yet) and their types (their profiles)."""

    ids: frozenset[int]
    languages: frozenset[str]
    models: frozenset[str]
    types: frozenset[str]
    # Whether any of their documents has an identity (library_to_search).
    identified: bool


# The traits library_traits reads, of every library or of those given.
_TRAITS = (
    "SELECT l.id, l.language, l.embedding_model, l.library_type,"
    f" {_library_identified('l.id')} FROM library_library l"
)


def library_traits(library_ids: list[int] | None) -> LibraryTraits:
    """The traits of these libraries (None: of every library). Every search without a library
    filter asks: one plain statement, not an ORM query to build (a millisecond of CPU per search),
    prepared as library_to_search's is."""
    with prepared.cursor(connection.alias) as cursor:
        if library_ids is None:
            cursor.execute(_TRAITS)
        else:
            cursor.execute(f"{_TRAITS} WHERE l.id = ANY(%s)", [library_ids])
        rows = cursor.fetchall()
    return LibraryTraits(
        ids=frozenset(row[0] for row in rows),
        languages=frozenset(row[1] for row in rows),
        models=frozenset(row[2] for row in rows),
        types=frozenset(row[3] for row in rows),
        identified=any(row[4] for row in rows),
    )


def item_names(item_ids: list[int]) -> dict[int, tuple[str, str]]:
    """uid and title of each of these items the caller sees."""
    rows = within_boundary(Item.objects.filter(pk__in=item_ids), "collection__library_id").values_list(
        "pk", "uid", "title"
    )
    return {pk: (uid, title) for pk, uid, title in rows}


def libraries() -> QuerySet[Library]:
    return within_boundary(Library.objects.order_by("name"), "id")


def collections(*, library_uid: str | None = None) -> QuerySet[Collection]:
    queryset = within_boundary(
        Collection.objects.select_related("library").order_by("library__name", "name"), "library_id"
    )
    if library_uid is not None:
        queryset = queryset.filter(library=get_library(library_uid))
    return queryset


def items(*, collection_uid: str | None = None, library_uid: str | None = None) -> QuerySet[Item]:
    queryset = within_boundary(
        Item.objects.select_related("collection", "collection__library").order_by("title", "id"),
        "collection__library_id",
    )
    if collection_uid is not None:
        queryset = queryset.filter(collection=get_collection(collection_uid))
    if library_uid is not None:
        queryset = queryset.filter(collection__library=get_library(library_uid))
    return queryset


def item_ids_where(
    *,
    organisation: str | None = None,
    doc_type: str | None = None,
    fiscal_year: int | None = None,
    fiscal_quarter: int | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
) -> list[int]:
    """The items (within the caller's boundary) with this identity: organisation a part of the
    name or the trading symbol, kind exact (case aside), fiscal year with any quarter unless one
    is given, date in the range."""
    queryset = within_boundary(Item.objects.all(), "collection__library_id")
    if organisation:
        queryset = queryset.filter(
            Q(organisation__icontains=organisation) | Q(metadata__identity__ticker__iexact=organisation)
        )
    if doc_type:
        queryset = queryset.filter(document_type__iexact=doc_type)
    if fiscal_year is not None:
        if fiscal_quarter is None:
            queryset = queryset.filter(
                Q(period=f"FY{fiscal_year}") | Q(period__regex=rf"^Q[1-4] FY{fiscal_year}$")
            )
        else:
            queryset = queryset.filter(period=f"Q{fiscal_quarter} FY{fiscal_year}")
    if date_from is not None:
        queryset = queryset.filter(document_date__gte=date_from)
    if date_to is not None:
        queryset = queryset.filter(document_date__lte=date_to)
    return list(queryset.order_by("id").values_list("id", flat=True))


def find_library(reference: str) -> Library:
    """A library by uid or by name (case-insensitive), as a person types it into a prompt."""
    reference = reference.strip()
    visible = within_boundary(Library.objects.all(), "id")
    library = visible.filter(uid=reference).first() or visible.filter(name__iexact=reference).first()
    if library is None:
        raise NotFound("library", reference)
    return library


def find_collection(reference: str, *, library: Library | None = None) -> Collection:
    """A collection by uid, or by name (case-insensitive) within `library` when one is given."""
    reference = reference.strip()
    queryset = within_boundary(Collection.objects.select_related("library"), "library_id")
    by_name = queryset.filter(name__iexact=reference)
    if library is not None:
        by_name = by_name.filter(library=library)
    collection = queryset.filter(uid=reference).first() or by_name.order_by("library__name").first()
    if collection is None or (library is not None and collection.library_id != library.pk):
        raise NotFound("collection", reference)
    return collection


def uids_starting_with(
    model: type[Library] | type[Item] | type[Chunk], prefix: str, *, limit: int
) -> tuple[list[str], int]:
    """Up to `limit` uids of `model` starting with `prefix`, and how many there are."""
    queryset = within_boundary(
        model.objects.filter(uid__startswith=prefix.strip()), _LIBRARY_FIELD[model]
    ).order_by("uid")
    return list(queryset.values_list("uid", flat=True)[:limit]), queryset.count()


@dataclass(frozen=True)
class Topic:
    heading: str
    item_count: int
    chunk_count: int


@dataclass(frozen=True)
class Topics:
    page: list[Topic]
    topic_count: int
    item_count: int
    chunk_count: int
    unsectioned_chunk_count: int


def topics(
    *,
    library_uid: str | None = None,
    collection_uid: str | None = None,
    depth: int = 2,
    limit: int,
    offset: int = 0,
) -> Topics:
    """Section headings (cut to `depth` levels) by how many chunks sit under them, one page."""
    chunks = within_boundary(Chunk.objects.all(), "library_id")
    scoped_items = items(collection_uid=collection_uid, library_uid=library_uid)
    if collection_uid is not None:
        chunks = chunks.filter(collection=get_collection(collection_uid))
    if library_uid is not None:
        chunks = chunks.filter(library=get_library(library_uid))
    heading = RawSQL(
        "array_to_string((string_to_array(section_path, %s))[1:%s], %s)",
        (SECTION_SEPARATOR, depth, SECTION_SEPARATOR),
    )
    grouped = (
        chunks.exclude(section_path="")
        .annotate(heading=heading)
        .values("heading")
        .annotate(items=Count("item_id", distinct=True), chunks=Count("id"))
        .order_by("-chunks", "heading")
    )
    totals = chunks.aggregate(chunks=Count("id"), unsectioned=Count("id", filter=Q(section_path="")))
    return Topics(
        page=[Topic(row["heading"], row["items"], row["chunks"]) for row in grouped[offset : offset + limit]],
        topic_count=grouped.count(),
        item_count=scoped_items.count(),
        chunk_count=totals["chunks"],
        unsectioned_chunk_count=totals["unsectioned"],
    )


@dataclass(frozen=True)
class CollectionOverview:
    collection: Collection
    items_by_status: dict[str, int]
    chunk_count: int
    image_chunk_count: int
    # Complete items chunked and embedded under another configuration (re-ingesting updates them).
    stale_item_count: int


def collection_overviews(
    *, collection_uid: str | None = None, ingest_config: Callable[[str], str]
) -> list[CollectionOverview]:
    """Every collection (or one) with its item and chunk counts; `ingest_config` gives the current
    signature for a library's type (its profile is part of it)."""
    scope = collections()
    if collection_uid is not None:
        scope = scope.filter(pk=get_collection(collection_uid).pk)
    found = list(scope)
    ids = [collection.pk for collection in found]
    by_status: dict[int, dict[str, int]] = {pk: dict.fromkeys(EmbeddingStatus.values, 0) for pk in ids}
    for row in (
        Item.objects.filter(collection_id__in=ids)
        .values("collection_id", "embedding_status")
        .annotate(n=Count("id"))
    ):
        by_status[row["collection_id"]][row["embedding_status"]] = row["n"]
    chunk_counts: dict[int, tuple[int, int]] = {
        row["collection_id"]: (row["n"], row["images"])
        for row in Chunk.objects.filter(collection_id__in=ids)
        .values("collection_id")
        .annotate(n=Count("id"), images=Count("id", filter=Q(kind=ChunkKind.IMAGE)))
    }
    stale: dict[int, int] = {}
    for library_type in {collection.library.library_type for collection in found}:
        of_type = [collection.pk for collection in found if collection.library.library_type == library_type]
        stale |= dict(
            Item.objects.filter(collection_id__in=of_type, embedding_status=EmbeddingStatus.COMPLETE)
            .exclude(metadata__ingest_config=ingest_config(library_type))
            .values("collection_id")
            .annotate(n=Count("id"))
            .values_list("collection_id", "n")
        )
    return [
        CollectionOverview(
            collection=collection,
            items_by_status=by_status[collection.pk],
            chunk_count=chunk_counts.get(collection.pk, (0, 0))[0],
            image_chunk_count=chunk_counts.get(collection.pk, (0, 0))[1],
            stale_item_count=stale.get(collection.pk, 0),
        )
        for collection in found
    ]
