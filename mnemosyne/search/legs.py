"""The search legs: each returns (chunk id, score) best first, with the filters applied inside."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connection, transaction
from django.db.models import F, Q
from pgvector.django import CosineDistance

from mnemosyne.library.models import Chunk


@dataclass(frozen=True)
class Filters:
    library_uid: str | None = None
    library_type: str | None = None
    collection_uid: str | None = None

    def q(self) -> Q:
        condition = Q()
        if self.library_uid is not None:
            condition &= Q(library__uid=self.library_uid)
        if self.library_type is not None:
            condition &= Q(library__library_type=self.library_type)
        if self.collection_uid is not None:
            condition &= Q(collection__uid=self.collection_uid)
        return condition


def vector_leg(vector: Sequence[float], filters: Filters, limit: int) -> list[tuple[int, float]]:
    """HNSW cosine search; the query vector is a bound parameter so the index is used."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(settings.SEARCH_HNSW_EF_SEARCH)])
        # pgvector 0.8: keep scanning the graph until filtered searches fill `limit`.
        cursor.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)")
        rows = list(
            Chunk.objects.filter(filters.q(), embedding__isnull=False)
            .annotate(distance=CosineDistance("embedding", list(vector)))
            .order_by("distance")
            .values_list("id", "distance")[:limit]
        )
    # relaxed_order may return neighbours slightly out of order.
    rows.sort(key=lambda row: row[1])
    return [(chunk_id, 1.0 - float(distance)) for chunk_id, distance in rows]


def fulltext_leg(query: str, filters: Filters, limit: int) -> list[tuple[int, float]]:
    """Full text with websearch_to_tsquery (quoted phrases, OR, -exclusion) over the GIN index."""
    tsquery = SearchQuery(query, search_type="websearch", config="english")
    rows = (
        Chunk.objects.filter(filters.q(), search_vector=tsquery)
        .annotate(rank=SearchRank(F("search_vector"), tsquery, normalization=1))
        .order_by("-rank", "id")
        .values_list("id", "rank")[:limit]
    )
    return [(chunk_id, float(rank)) for chunk_id, rank in rows]


def hydrate(ids: Sequence[int]) -> dict[int, Chunk]:
    chunks = (
        Chunk.objects.filter(id__in=list(ids))
        .select_related("item", "collection", "library")
        .defer("embedding", "search_vector")
    )
    return {chunk.id: chunk for chunk in chunks}
