"""A search's scope — libraries, collection, documents, images — resolved to ids once
(service.validate) and rendered for each store that reads it: SQL on chunks, on postings, on items,
the ORM, and (its libraries and collection, lib/scope.Scope) the concept graph. Every leg, the
documents and the pages read the same scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db.models import Q

from mnemosyne.lib.scope import Scope
from mnemosyne.library import selectors
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import ChunkKind
from mnemosyne.profiles.periods import parse_label


@dataclass(frozen=True)
class DocumentFilter:
    """Only documents that are this: organisation (a part of its name, or its trading symbol),
    kind (doc_type: 10-K, 10-Q, 8-K, earnings release, paper, manual, …), fiscal period (FY2019
    takes its quarters too; Q3 FY2023 only that quarter), and a range of the date each speaks for.
    Every field given must hold."""

    organisation: str | None = None
    doc_type: str | None = None
    period: str | None = None
    date_from: date | None = None
    date_to: date | None = None


@dataclass(frozen=True)
class Filters(Scope):
    """The scope as ids (AND-combined): the libraries and collection every store keeps (Scope),
    and what only the chunk tables know."""

    include_images: bool = True
    # The caller sees only some libraries (an MCP token's boundary); legs run in other threads,
    # which do not see the caller's context, so the filters carry it.
    confined: bool = False
    # The text-search configurations of the libraries searched (their languages): the query is
    # parsed with each, and a chunk matches the terms of its own library's.
    text_configs: tuple[str, ...] = ("english",)
    # The libraries' profile writes fiscal periods out in their index (profiles/periods.py): the
    # query is read the same way.
    written_periods: bool = False
    # Only chunks of these items (a search's document filter); None: every item.
    item_ids: list[int] | None = None

    def posting_sql(self) -> tuple[str, dict[str, Any]]:
        """The filters as SQL on library_posting `p` (AND-combined), with their named parameters."""
        return self._sql(
            "p",
            "NOT p.is_image",
            "EXISTS (SELECT 1 FROM library_chunk fc"
            " WHERE fc.id = p.chunk_id AND fc.item_id = ANY(%(item_ids)s))",
        )

    def chunk_sql(self) -> tuple[str, dict[str, Any]]:
        """The filters as SQL on library_chunk `c`."""
        return self._sql("c", f"c.kind <> '{ChunkKind.IMAGE.value}'", "c.item_id = ANY(%(item_ids)s)")

    def item_sql(self) -> tuple[str, dict[str, Any]]:
        """The filters as SQL on library_item `i` joined to its library_collection `o` (images aside:
        an item is not one)."""
        sql, params = self.sql("o.library_id", "i.collection_id")
        if self.item_ids is not None:
            sql += " AND i.id = ANY(%(item_ids)s)"
            params["item_ids"] = self.item_ids
        return sql, params

    def _sql(self, alias: str, not_image: str, of_items: str) -> tuple[str, dict[str, Any]]:
        sql, params = self.sql(f"{alias}.library_id", f"{alias}.collection_id")
        if not self.include_images:
            sql += f" AND {not_image}"
        if self.item_ids is not None:
            sql += f" AND {of_items}"
            params["item_ids"] = self.item_ids
        return sql, params

    def q(self) -> Q:
        condition = super().q()
        if not self.include_images:
            condition &= ~Q(kind=ChunkKind.IMAGE)
        if self.item_ids is not None:
            condition &= Q(item_id__in=self.item_ids)
        return condition


def documents_matching(documents: DocumentFilter) -> list[int]:
    """The items a search's document filter keeps, or InvalidArgument naming what is wrong with it."""
    quarter: int | None = None
    year: int | None = None
    if documents.period:
        label = parse_label(documents.period)
        if label is None:
            raise InvalidArgument(
                f"documents.period must look like FY2019, Q3 FY2023 or 2019, got {documents.period!r}"
            )
        quarter, year = label
    if documents.date_from and documents.date_to and documents.date_from > documents.date_to:
        raise InvalidArgument(
            f"documents.date_from ({documents.date_from}) is after documents.date_to ({documents.date_to})"
        )
    return selectors.item_ids_where(
        organisation=(documents.organisation or "").strip() or None,
        doc_type=(documents.doc_type or "").strip() or None,
        fiscal_year=year,
        fiscal_quarter=quarter,
        date_from=documents.date_from,
        date_to=documents.date_to,
    )
