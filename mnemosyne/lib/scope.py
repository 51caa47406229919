"""Which libraries and collection a read covers, as ids: the part of a search's filters that every
store keeps — chunks, postings and items in SQL, the ORM, the concept graph's mentions in SQL or
Cypher. One class renders it for each, so a scope is written once (search.filters.Filters is a
Scope with what only the chunk tables know: images, documents).

Ids, not uids: a join on uids hides the filter's selectivity from the planner, which then gives up
the HNSW index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q


@dataclass(frozen=True)
class Scope:
    """AND-combined; nothing set is everything."""

    library_id: int | None = None
    # Only these libraries (say, those of a library type); None = no such bound, [] = nothing.
    library_ids: list[int] | None = None
    collection_id: int | None = None

    def matches_nothing(self) -> bool:
        return self.library_ids is not None and not self.library_ids

    def sql(self, library: str, collection: str) -> tuple[str, dict[str, Any]]:
        """The scope as SQL on the named library and collection id columns (" AND …" clauses, or
        ""), with its named parameters (library_id, library_ids, collection_id)."""
        clauses: list[str] = []
        params: dict[str, Any] = {}
        if self.library_id is not None:
            clauses.append(f"{library} = %(library_id)s")
            params["library_id"] = self.library_id
        if self.library_ids is not None:
            clauses.append(f"{library} = ANY(%(library_ids)s)")
            params["library_ids"] = list(self.library_ids)
        if self.collection_id is not None:
            clauses.append(f"{collection} = %(collection_id)s")
            params["collection_id"] = self.collection_id
        return "".join(f" AND {clause}" for clause in clauses), params

    def q(self) -> Q:
        """The scope for the ORM, on a model with library_id and collection_id fields."""
        condition = Q()
        if self.library_id is not None:
            condition &= Q(library_id=self.library_id)
        if self.library_ids is not None:
            condition &= Q(library_id__in=self.library_ids)
        if self.collection_id is not None:
            condition &= Q(collection_id=self.collection_id)
        return condition

    def cypher(self, node: str) -> tuple[str, dict[str, Any]]:
        """The scope as a Cypher condition on a node with library_id and collection_id properties
        ("true" when unbounded), with its parameters."""
        clauses: list[str] = []
        params: dict[str, Any] = {}
        if self.library_id is not None:
            clauses.append(f"{node}.library_id = $library_id")
            params["library_id"] = self.library_id
        if self.library_ids is not None:
            clauses.append(f"{node}.library_id IN $library_ids")
            params["library_ids"] = list(self.library_ids)
        if self.collection_id is not None:
            clauses.append(f"{node}.collection_id = $collection_id")
            params["collection_id"] = self.collection_id
        return " AND ".join(clauses) or "true", params


# Every library and collection.
EVERYWHERE = Scope()
