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

# Each bound a scope may set: its field (and parameter name), the id it bounds, whether a list of them.
_BOUNDS: tuple[tuple[str, str, bool], ...] = (
    ("library_id", "library_id", False),
    ("library_ids", "library_id", True),
    ("collection_id", "collection_id", False),
)


@dataclass(frozen=True)
class Scope:
    """AND-combined; nothing set is everything."""

    library_id: int | None = None
    # Only these libraries (say, those of a library type); None = no such bound, [] = nothing.
    library_ids: list[int] | None = None
    collection_id: int | None = None

    def matches_nothing(self) -> bool:
        return self.library_ids is not None and not self.library_ids

    def _bounds(self) -> list[tuple[str, str, bool]]:
        """The bounds set (_BOUNDS)."""
        return [bound for bound in _BOUNDS if getattr(self, bound[0]) is not None]

    def _params(self) -> dict[str, Any]:
        return {
            name: list(getattr(self, name)) if many else getattr(self, name)
            for name, _, many in self._bounds()
        }

    def sql(self, library: str, collection: str) -> tuple[str, dict[str, Any]]:
        """The scope as SQL on the named library and collection id columns (" AND …" clauses, or
        ""), with its named parameters (library_id, library_ids, collection_id)."""
        columns = {"library_id": library, "collection_id": collection}
        clauses = [
            f" AND {columns[field]} = ANY(%({name})s)" if many else f" AND {columns[field]} = %({name})s"
            for name, field, many in self._bounds()
        ]
        return "".join(clauses), self._params()

    def q(self) -> Q:
        """The scope for the ORM, on a model with library_id and collection_id fields."""
        condition = Q()
        for name, field, many in self._bounds():
            condition &= Q(**{f"{field}__in" if many else field: getattr(self, name)})
        return condition

    def cypher(self, node: str) -> tuple[str, dict[str, Any]]:
        """The scope as a Cypher condition on a node with library_id and collection_id properties
        ("true" when unbounded), with its parameters."""
        clauses = [
            f"{node}.{field} IN ${name}" if many else f"{node}.{field} = ${name}"
            for name, field, many in self._bounds()
        ]
        return " AND ".join(clauses) or "true", self._params()


# Every library and collection.
EVERYWHERE = Scope()
