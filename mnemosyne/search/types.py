"""What a search is asked and what it answers: the request, its resolved form, hits and the response.

Its own module so the steps of a search (service, reranking, shaping) share these types without
importing each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mnemosyne.profiles.query_rules import Prepared, QueryRules
from mnemosyne.search.hits import HitChunk

if TYPE_CHECKING:
    from mnemosyne.search.filters import DocumentFilter, Filters
    from mnemosyne.search.named_documents import NamedDocuments

# The legs a search can run, in the order they are fused and reported.
SEARCH_TYPES = ("vector", "fulltext", "graph")
DEFAULT_LIMIT = 20


@dataclass(frozen=True)
class SearchRequest:
    query: str
    library_uid: str | None = None
    library_type: str | None = None
    collection_uid: str | None = None
    limit: int = DEFAULT_LIMIT
    search_types: Sequence[str] = SEARCH_TYPES
    rerank: bool = True
    include_images: bool = True
    # None: the configured default fusion. A number in [0, 1]: relative-score fusion weighting
    # the vector leg by alpha and the full-text leg by 1 - alpha (Weaviate's hybrid alpha).
    alpha: float | None = None
    # Skip this many results (paging); the window offset + limit is at most MAX_WINDOW.
    offset: int = 0
    # None: relevance order. A number in [0, 1]: maximal marginal relevance, trading relevance
    # for diversity (0 = relevance only).
    diversity: float | None = None
    collapse_duplicates: bool = True
    # Only documents with this identity (profiles/identity.py): None, every document.
    documents: DocumentFilter | None = None
    # "page" or "item": one hit per page or per document, each its best chunk; None: chunks.
    group_by: str | None = None
    # Also say what each hit's full-text and graph scores are made of (leg_parts.py).
    explain: bool = False


@dataclass(frozen=True)
class ResolvedSearch:
    """A validated request: the query trimmed, the filters resolved to ids once for every leg."""

    request: SearchRequest
    query: str
    filters: Filters
    legs: tuple[str, ...]
    # The libraries the search reads (None: every library), and the models their vectors come from:
    # the query must be embedded by those.
    libraries: list[int] | None = None
    models: frozenset[str] = frozenset()
    # What the libraries' profile and synonym sets run on the question (profiles/query_rules.py).
    rules: QueryRules = field(default_factory=QueryRules)
    # Whether any document in scope has an identity, which a question may name (named_documents.py).
    identified: bool = True


@dataclass(frozen=True)
class LegHit:
    rank: int
    score: float


@dataclass(frozen=True)
class RankedHit:
    chunk: HitChunk
    score: float
    legs: dict[str, LegHit]
    rerank_score: float | None = None
    # How well its document matches the question's identity words, and its page's evidence, each
    # in [0, 1] (search/units.py); None when not scored.
    document_score: float | None = None
    page_score: float | None = None
    # uids of the other chunks of its page or document, when hits are grouped (group_by)
    grouped: list[str] = field(default_factory=list)
    # uids of near-identical chunks folded into this one
    duplicates: list[str] = field(default_factory=list)
    # With explain: each query term's share of its full-text score, each concept's of its graph score.
    term_shares: dict[str, float] = field(default_factory=dict)
    concept_shares: dict[str, float] = field(default_factory=dict)


@dataclass
class SearchResponse:
    hits: list[RankedHit]
    legs_run: list[str]
    legs_not_run: dict[str, str] = field(default_factory=dict)
    rerank_applied: bool = False
    rerank_note: str = ""
    fusion: str = ""
    # Whether results beyond this page may exist.
    more: bool = False
    # How long each leg that ran took (the named_ legs: within the documents the question names).
    leg_seconds: dict[str, float] = field(default_factory=dict)
    # What the rules did to the question, and the documents it named (for explain).
    rules: QueryRules = field(default_factory=QueryRules)
    prepared: Prepared | None = None
    named: NamedDocuments | None = None
