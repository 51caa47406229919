"""Documents as a unit of ranking: which of the searched documents the question names.

Long reports come in versions (a company's 10-K of each year, its quarterly reports) whose
passages look alike, so the passage legs alone cannot tell which version a question is about. What
can is the document's identity — organisation, symbol, kind, period, date (profiles/identity.py),
indexed per item as `identity_vector`. A question's words are matched against those of every
document in scope, each word weighted by how rare it is among them (an organisation named by one
document weighs more than a year shared by ten), and a document's score is the share of that
weight it matches: 1.0 for the document that has every identity word the question uses.

A word names documents only when it is theirs: when most of the passages that hold it belong to
the documents whose identity has it (NAME_SHARE). "Costco" is; "cancer", the first word of a
journal's copyright holder among thousands of abstracts about cancer, is not, and ranks nothing.

Under a profile whose documents are versions over time (filings), a period the question names
counts for the versions that cover it (profiles/periods.py), and when the question asks for the
latest version without naming a period, the newest document of each organisation and kind among
those it names scores a bonus instead. Under any other profile a year names no document: it is
left out of the identity words, so "the 2019 budget" is not every document dated 2019.

The scores are fused into the chunk ranking by search/units.py; a question that names no
identity word scores no document, and the ranking is the passage legs' alone.
"""

from __future__ import annotations

import difflib
import math
import re
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from django.db import connections
from django.db.backends.utils import CursorWrapper

from mnemosyne.lib.replicas import reading
from mnemosyne.profiles.forms import query_form
from mnemosyne.profiles.periods import (
    Covered,
    Period,
    covered,
    is_period_word,
    is_quarterly,
    match,
    named_periods,
)
from mnemosyne.text.english_words import is_word

if TYPE_CHECKING:
    from mnemosyne.search.legs import Filters

_YEAR = re.compile(r"^\d{4}$")
# Documents kept as matching the question, best first.
MAX_DOCUMENTS = 50
# A misspelt organisation name: a word at least this similar (difflib's ratio) to a name's word.
TYPO_SIMILARITY = 0.8
MIN_NAME_LETTERS = 4
# The organisations' words, per scope, are read again after this many seconds.
NAMES_SECONDS = 30.0
_NAMES: dict[tuple[str, str, str], tuple[float, frozenset[str]]] = {}
_WORD = re.compile(rf"[A-Za-z]{{{MIN_NAME_LETTERS},}}")
# The documents searched again for the passage (document_legs.py): at most this many, each within
# this share of the best score, when the question's identity words weigh this much (confidence).
NAMED = 3
NAMED_SHARE = 0.75
MIN_CONFIDENCE = 0.5
# The score the newest version gets when the question asks for the latest.
LATEST_BONUS = 0.5
# A word names documents when at least this share of the passages holding it (of at most
# NAME_SAMPLE read) belong to the documents whose identity has it.
NAME_SHARE = 0.5
NAME_SAMPLE = 2000
# What covering the period a question names weighs, against its name words' rarity (about a
# word shared by one document in ten).
PERIOD_WEIGHT = math.log(1 + 10)
# A number kept in an item's metadata["identity"], or null (a hand edit may have left anything).
_NUMBER = (
    "CASE WHEN s.metadata->'identity'->>'{key}' ~ '^[0-9]{{1,4}}$'"
    " THEN (s.metadata->'identity'->>'{key}')::integer END"
)


@dataclass(frozen=True)
class NamedDocuments:
    """The documents a question names, and the question without the words that named them."""

    scores: dict[int, float] = field(default_factory=dict)
    # The identity weight of the question's words (the sum of their rarity among documents): a
    # question naming a rare organisation weighs more than one naming only a common year.
    weight: float = 0.0
    # The question less its identity words: what to look for inside the named documents.
    content: str = ""
    # The identity words (lexemes) each scored document matched, for `explain`.
    words: dict[int, tuple[str, ...]] = field(default_factory=dict)

    def best(self) -> list[int]:
        """The documents the question names most clearly: at most NAMED, within NAMED_SHARE of the
        best score, and only when the question's identity words carry weight."""
        if confidence(self.weight) < MIN_CONFIDENCE or not self.scores:
            return []
        top = max(self.scores.values())
        ranked = sorted(self.scores.items(), key=lambda pair: (-pair[1], pair[0]))
        return [item for item, value in ranked[:NAMED] if value >= NAMED_SHARE * top]


def named_documents(
    question: str, filters: Filters, *, latest: bool = False, versions: bool = False
) -> NamedDocuments:
    """Each document in scope that the question names, scored in [0, 1]; with `versions`, by the
    periods it names too (and `latest`: the newest version)."""
    where, params = filters.item_sql()
    question = spelled_names(question, _organisation_words(where, params))
    values: dict[str, Any] = {
        "query": query_form(question, versions=versions),
        "configs": list(filters.text_configs),
        "limit": MAX_DOCUMENTS,
    } | params
    sql = f"""
        WITH q AS (
            SELECT DISTINCT lexeme
            FROM unnest(%(configs)s::regconfig[]) AS cfg,
                 unnest(tsvector_to_array(to_tsvector(cfg, %(query)s))) AS lexeme
        ), scope AS (
            SELECT i.id, i.identity_vector, i.organisation, i.document_type, i.document_date, i.metadata
            FROM library_item i JOIN library_collection o ON o.id = i.collection_id
            WHERE i.identity_vector IS NOT NULL AND length(i.identity_vector) > 0 {where}
        ), n AS (
            SELECT count(*)::float8 AS n FROM scope
        ), w AS (
            SELECT q.lexeme, ln(1 + (n.n - d.df + 0.5) / (d.df + 0.5)) AS idf
            FROM q CROSS JOIN n
            CROSS JOIN LATERAL (
                SELECT count(*)::float8 AS df FROM scope s
                WHERE s.identity_vector @@ quote_literal(q.lexeme)::tsquery
            ) d
            WHERE d.df > 0
        ), matched AS (
            SELECT s.id, sum(w.idf) AS weight, array_agg(w.lexeme) AS lexemes
            FROM scope s CROSS JOIN LATERAL unnest(s.identity_vector) AS u
            JOIN w ON w.lexeme = u.lexeme
            GROUP BY s.id
            ORDER BY weight DESC, s.id
            LIMIT %(limit)s
        )
        SELECT s.id, m.lexemes, s.organisation, s.document_type, s.document_date,
               {_NUMBER.format(key="fiscal_year")}, {_NUMBER.format(key="fiscal_quarter")},
               (SELECT array_agg(lexeme) FROM w), (SELECT array_agg(idf) FROM w)
        FROM scope s JOIN matched m ON m.id = s.id
    """
    with connections[reading()].cursor() as cursor:
        cursor.execute(sql, values)
        rows = cursor.fetchall()
        if not rows:
            return NamedDocuments(content=question)
        weights = dict(zip(rows[0][7], rows[0][8], strict=True))
        if not versions:
            weights = {lexeme: idf for lexeme, idf in weights.items() if not _YEAR.match(lexeme)}
        holders: dict[str, set[int]] = defaultdict(set)
        for row in rows:
            for lexeme in row[1]:
                holders[lexeme].add(row[0])
        weights = _names_only(cursor, weights, holders, filters, versions=versions)
        if not weights:
            return NamedDocuments(content=question)
        content = _without_words(cursor, question, set(weights), filters.text_configs, versions=versions)
    found = [
        _Document(
            id=row[0],
            lexemes=frozenset(row[1]) & set(weights),
            organisation=row[2],
            document_type=row[3],
            date=row[4],
            covered=covered(
                fiscal_year=row[5] if isinstance(row[5], int) else None,
                fiscal_quarter=row[6] if isinstance(row[6], int) else None,
                date=row[4],
                quarterly=is_quarterly(row[3]),
            ),
        )
        for row in rows
    ]
    named = named_periods(question) if versions else []
    scores = score(found, weights, named, latest=latest, versions=versions)
    words = {document.id: tuple(sorted(document.lexemes)) for document in found if document.id in scores}
    return NamedDocuments(
        scores, question_weight(weights, named, latest=latest, versions=versions), content, words
    )


def question_weight(weights: dict[str, float], named: list[Period], *, latest: bool, versions: bool) -> float:
    """How much a question says about which document it means: the rarity of its name words, and
    PERIOD_WEIGHT when it names a period — or asks for the latest version, which names one (the
    newest) as surely: "Globex's latest quarter" means one filing though "Globex" is four's."""
    return sum(name_weights(weights, versions=versions).values()) + (
        PERIOD_WEIGHT if named or latest else 0.0
    )


def name_weights(weights: dict[str, float], *, versions: bool) -> dict[str, float]:
    """The question's identity words that name documents by name, symbol or kind: all of them, less
    the period words under a profile of versions (a period is matched whole, by periods.match)."""
    return {lexeme: weight for lexeme, weight in weights.items() if not (versions and is_period_word(lexeme))}


def spelled_names(question: str, names: frozenset[str]) -> str:
    """The question with a misspelt organisation name ("Neflix", "Activsion") put right: a word
    that is no English word and no name, but within a letter or two of one name's word."""

    def mended(match: re.Match[str]) -> str:
        word = match.group(0)
        lowered = word.lower()
        if lowered in names or is_word(word):
            return word
        close = difflib.get_close_matches(lowered, names, n=1, cutoff=TYPO_SIMILARITY)
        return close[0] if close and close[0][0] == lowered[0] else word

    return _WORD.sub(mended, question) if names else question


def _organisation_words(where: str, params: dict[str, Any]) -> frozenset[str]:
    """The words of the organisations and symbols of the documents in scope (cached a short while)."""
    key = (reading(), where, repr(sorted(params.items())))
    now = time.monotonic()
    cached = _NAMES.get(key)
    if cached is not None and now - cached[0] < NAMES_SECONDS:
        return cached[1]
    with connections[reading()].cursor() as cursor:
        cursor.execute(
            f"""
            SELECT DISTINCT i.organisation, i.metadata->'identity'->>'ticker'
            FROM library_item i JOIN library_collection o ON o.id = i.collection_id
            WHERE i.organisation <> '' {where}
            """,
            params,
        )
        rows = cursor.fetchall()
    words = frozenset(
        word.lower()
        for row in rows
        for value in row
        if value
        for word in _WORD.findall(value)
        if len(word) >= MIN_NAME_LETTERS
    )
    _NAMES[key] = (now, words)
    return words


def _names_only(
    cursor: CursorWrapper,
    weights: dict[str, float],
    holders: dict[str, set[int]],
    filters: Filters,
    *,
    versions: bool,
) -> dict[str, float]:
    """The question's identity words that name documents: period words (with `versions`), and the
    words most of whose passages (in scope) belong to documents whose identity holds them."""
    names = list(name_weights(weights, versions=versions))
    if not names:
        return weights
    where, params = filters.posting_sql()
    cursor.execute(
        f"""
        SELECT t.lexeme, c.item_id, count(*)
        FROM library_term t
        CROSS JOIN LATERAL (
            SELECT p.chunk_id FROM library_posting p
            WHERE p.term_id = t.id {where}
            LIMIT %(sample)s
        ) p
        JOIN library_chunk c ON c.id = p.chunk_id
        WHERE t.lexeme = ANY(%(names)s)
        GROUP BY t.lexeme, c.item_id
        """,
        params | {"names": names, "sample": NAME_SAMPLE},
    )
    held: dict[str, int] = defaultdict(int)
    theirs: dict[str, int] = defaultdict(int)
    for lexeme, item_id, count in cursor.fetchall():
        held[lexeme] += count
        if item_id in holders[lexeme]:
            theirs[lexeme] += count
    return {
        lexeme: weight
        for lexeme, weight in weights.items()
        # (A word no passage holds is in identities alone: it can only name documents.)
        if (versions and is_period_word(lexeme)) or theirs[lexeme] >= NAME_SHARE * held[lexeme]
    }


def _without_words(
    cursor: CursorWrapper, question: str, lexemes: set[str], configs: Sequence[str], *, versions: bool
) -> str:
    """The question less the words whose lexemes are among `lexemes` (in any of `configs`)."""
    if not lexemes:
        return question
    text = query_form(question, versions=versions)
    cursor.execute(
        """
        SELECT d.ordinality, d.token, coalesce(d.lexemes, ARRAY[]::text[])
        FROM unnest(%s::regconfig[]) AS cfg, ts_debug(cfg, %s) WITH ORDINALITY AS d
        ORDER BY cfg, d.ordinality
        """,
        [list(configs[:1]), text],
    )
    kept = [token for _, token, found in cursor.fetchall() if not (found and set(found) <= lexemes)]
    stripped = " ".join("".join(kept).split())
    return stripped if any(char.isalnum() for char in stripped) else question


@dataclass(frozen=True)
class _Document:
    id: int
    lexemes: frozenset[str]
    organisation: str
    document_type: str
    date: date | None
    covered: Covered


def score(
    documents: list[_Document],
    weights: dict[str, float],
    named: list[Period],
    *,
    latest: bool,
    versions: bool = True,
) -> dict[int, float]:
    """Each document's share of the question's identity weight: the rarity of the name, symbol
    and kind words it matches, and PERIOD_WEIGHT when it covers a period the question names.
    Asked for the latest, the newest of each organisation's documents of a kind (among those
    the question names) instead gets LATEST_BONUS over the best share of its group."""
    names = name_weights(weights, versions=versions)
    total = sum(names.values()) + (PERIOD_WEIGHT if named else 0.0)
    if total <= 0:
        return {}
    scores: dict[int, float] = {}
    for document in documents:
        matched = sum(names[lexeme] for lexeme in document.lexemes if lexeme in names)
        if named:
            matched += PERIOD_WEIGHT * match(named, document.covered)
        if matched > 0:
            scores[document.id] = matched / total
    if not latest:
        return scores
    groups: dict[tuple[str, str], list[_Document]] = defaultdict(list)
    for document in documents:
        if document.organisation and document.date is not None and document.id in scores:
            groups[(document.organisation.lower(), document.document_type)].append(document)
    for members in groups.values():
        if len(members) < 2:
            continue
        best = max(scores[member.id] for member in members)
        newest = max(members, key=lambda member: member.date or date.min)
        for member in members:
            scores[member.id] = best
        scores[newest.id] = best + LATEST_BONUS
    return scores


def confidence(weight: float) -> float:
    """How far to trust the document scores: a question whose identity words are all common
    (a year many documents share) says little about which document it means."""
    return min(1.0, weight / FULL_WEIGHT) if weight > 0 else 0.0


# The identity weight at which document scores count in full: about two rare words.
FULL_WEIGHT = 2 * math.log(1 + 10)
