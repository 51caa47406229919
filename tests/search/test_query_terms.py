"""A question's terms and their weights (search/query_terms.py): function words weigh at most the
question's median content term, in every BM25 score that reads them."""

from __future__ import annotations

import math
import statistics

import pytest
from django.db import connection
from pytest_django.fixtures import Settings

from mnemosyne.search import legs, query_terms
from tests.search.test_bm25 import add_chunks, lexemes, reference_bm25

pytestmark = pytest.mark.django_db

# "inside" is in one chunk: by rarity alone it would be the question's heaviest word.
TEXTS = [
    "Elements of structured types that their definition leaves unnamed receive the names ?1, ?2.",
    "Prints the tree starting from the element inside the node.",
    "Each element has a name and a type; a structure holds elements.",
    "The type of an element names its encoding.",
    "Names are resolved when the definitions are parsed.",
    "A structure holds named elements of each type.",
]
QUESTION = "What names do elements without a name of their own get inside structured types?"


def weights(question: str) -> dict[str, float]:
    with connection.cursor() as cursor:
        cursor.execute(
            f"{query_terms.SQL} SELECT lexeme, w FROM query_terms",
            query_terms.values(question, ["english"]),
        )
        return {lexeme: float(w) for lexeme, w in cursor.fetchall()}


def idf_weight(term: str, k1: float) -> float:
    documents = [lexemes(text) for text in TEXTS]
    df = sum(1 for document in documents if term in document)
    return math.log(1 + (len(documents) - df + 0.5) / (df + 0.5)) * (k1 + 1)


def test_the_function_words_of_a_question() -> None:
    assert query_terms.function_words(QUESTION) == "without inside"
    assert query_terms.function_words("Whose licence applies WITHIN the EU?") == "Whose WITHIN"
    # Words that are also nouns or months are content.
    assert query_terms.function_words("revenue in May past the round of funding near Paris") == ""


def test_a_rare_function_word_weighs_the_median_content_term(settings: Settings) -> None:
    add_chunks(TEXTS)
    k1 = settings.SEARCH_BM25_K1
    found = weights(QUESTION)
    content = {term: idf_weight(term, k1) for term in ("name", "element", "structur", "type")}
    for term, weight in content.items():
        assert found[term] == pytest.approx(weight, rel=1e-9)
    median = statistics.median(content.values())
    assert idf_weight("insid", k1) > median  # the rarest word of the question, by far
    assert found["insid"] == pytest.approx(median, rel=1e-9)
    # "without" is in no chunk: not a term of the index, so not weighed at all.
    assert "without" not in found


def test_a_common_function_word_and_a_question_of_function_words_alone_keep_their_rarity(
    settings: Settings,
) -> None:
    texts = [*TEXTS, "Inside the box, inside the lid, inside the case.", "Inside again."]
    add_chunks(texts)
    k1 = settings.SEARCH_BM25_K1
    documents = [lexemes(text) for text in texts]
    df = sum(1 for document in documents if "insid" in document)
    rarity = math.log(1 + (len(documents) - df + 0.5) / (df + 0.5)) * (k1 + 1)
    assert weights("inside")["insid"] == pytest.approx(rarity, rel=1e-9)
    # Lighter than the median content term already: unchanged.
    unique = weights("inside the unnamed receive definition")
    assert unique["insid"] == pytest.approx(rarity, rel=1e-9)
    assert unique["insid"] < statistics.median(w for term, w in unique.items() if term != "insid")


def test_the_full_text_leg_scores_with_those_weights(settings: Settings) -> None:
    chunks = add_chunks(TEXTS)
    k1, b = settings.SEARCH_BM25_K1, settings.SEARCH_BM25_B
    found = dict(legs.fulltext_leg(QUESTION, legs.Filters(), 10))
    weighed = reference_bm25(QUESTION, TEXTS, k1, b, weights={"insid": weights(QUESTION)["insid"]})
    by_rarity = reference_bm25(QUESTION, TEXTS, k1, b)
    for chunk, expected in zip(chunks, weighed, strict=True):
        assert found.get(chunk.pk, 0.0) == pytest.approx(expected, rel=1e-9)
    # By rarity alone the chunk that says "inside" ranks first; weighed, below the answer.
    assert max(range(len(TEXTS)), key=by_rarity.__getitem__) == 1
    assert weighed[1] < weighed[0]
