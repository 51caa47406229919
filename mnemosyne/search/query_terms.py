"""A question's terms and what each weighs, for every BM25 score of the search.

The full-text leg (search/legs.py), its explain (search/leg_parts.py), the pages' scores
(search/pages.py) and the named documents' full-text leg (search/document_legs.py) all start from
the CTE `SQL`: the question's stemmed terms that the index holds, each with its weight
w = IDF·(k1 + 1) and BM25's length-normalisation constants c1, c2 for chunks. Only the
SEARCH_BM25_MAX_QUERY_TERMS heaviest terms are kept, so a long text pasted as a query costs what
a sentence does (Lucene's MoreLikeThis keeps a text's 25 best terms likewise).

**Function words.** IDF weighs a word by how rare it is among the searched chunks, and in a small
library that rarity is noisy: a preposition that PostgreSQL's stop-word list lacks ("inside",
"within", "without", "toward") can be rare in a manual of two hundred pages and outweigh every
word the question is about — "What names do elements without a name of their own get inside
structured types?" ranked a function reference that says "inside the structure" above the
section that answers the question. A word of English's closed classes that the stop-word list
leaves out (FUNCTION_WORDS) weighs at most what the question's median content term does. Where
such a word is common, as in a large library, it weighs less than that already and nothing
changes; it is never dropped, so a phrase the question quotes still matches. Measured:
docs/benchmarks.md, "Long documents".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from django.conf import settings

from mnemosyne.profiles.forms import query_form

# Closed-class English words PostgreSQL's English stop-word list does not hold. Words that are
# also nouns, adjectives or months ("may", "past", "round", "plus", "near") are not among them.
_PREPOSITIONS = (
    "across along alongside amid amidst among amongst around atop behind beneath beside besides beyond"
    " despite except inside onto outside throughout toward towards underneath unlike upon via within without"
)
_CONJUNCTIONS = "although though unless whereas whether either neither"
_MODALS = "would could might must shall"
FUNCTION_WORDS = frozenset(f"{_PREPOSITIONS} {_CONJUNCTIONS} {_MODALS} whose".split())
_WORD = re.compile(r"[A-Za-z]+")

# The question's terms as `query_terms (id, lexeme, w, c1, c2, df)`, for SQL that goes on after it
# (df: in how many chunks of every library the term is).
SQL = """
    WITH stats AS (
        SELECT greatest(chunk_count, 1)::float8 AS n,
               greatest(total_length, 1)::float8 / greatest(chunk_count, 1) AS avgdl
        FROM library_corpus_stats WHERE id = 1
    ), question_terms AS (
        SELECT t.id, t.lexeme,
               ln(1 + (s.n - t.document_frequency + 0.5::float8) / (t.document_frequency + 0.5::float8))
                   * (%(k1)s::float8 + 1) AS w,
               t.lexeme = ANY (ARRAY(
                   SELECT unnest(tsvector_to_array(to_tsvector(cfg, %(function_words)s)))
                   FROM unnest(%(configs)s::regconfig[]) AS cfg
               )) AS function_word,
               %(k1)s::float8 * (1 - %(b)s::float8) AS c1,
               %(k1)s::float8 * %(b)s::float8 / s.avgdl AS c2,
               t.document_frequency AS df
        FROM library_term t CROSS JOIN stats s
        WHERE t.lexeme = ANY (ARRAY(
            SELECT unnest(tsvector_to_array(to_tsvector(cfg, %(query)s)))
            FROM unnest(%(configs)s::regconfig[]) AS cfg
        ))
          AND t.document_frequency > 0
    ), query_terms AS (
        -- least() ignores the NULL median of a question made of function words alone.
        SELECT id, lexeme,
               CASE WHEN function_word THEN least(w, (
                   SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY w)
                   FROM question_terms WHERE NOT function_word
               )) ELSE w END AS w,
               c1, c2, df
        FROM question_terms
        ORDER BY 3 DESC, id
        LIMIT %(max_terms)s
    )
"""


def values(question: str, configs: Sequence[str], *, periods: bool = False) -> dict[str, Any]:
    """What SQL reads: BM25's constants, the question as the index holds numbers ("12,345" as
    12345) and, where the profile writes them out, periods ("FY2019" with "fiscal 2019"), its
    function words, the terms kept, the libraries' languages."""
    return {
        "k1": settings.SEARCH_BM25_K1,
        "b": settings.SEARCH_BM25_B,
        "query": query_form(question, versions=periods),
        "function_words": function_words(question),
        "max_terms": settings.SEARCH_BM25_MAX_QUERY_TERMS,
        "configs": list(configs),
    }


def function_words(question: str) -> str:
    """The question's function words (FUNCTION_WORDS), space-separated; empty when it has none."""
    return " ".join(word for word in _WORD.findall(question) if word.lower() in FUNCTION_WORDS)
