"""Concept extraction: normalised keys, readable labels, junk filtered, deterministic and fast."""

from __future__ import annotations

import pytest

from mnemosyne.graph.concepts import (
    Concept,
    extract_concepts,
    fold_plural,
    normalise_concept,
    query_concepts,
)

NEURAL = (
    "Neural networks are a family of machine learning models. Deep neural networks with many layers "
    "learn representations of data. Convolutional neural networks are used for image recognition, "
    "while recurrent neural networks model sequences. Training neural networks uses stochastic gradient "
    "descent and backpropagation on GPUs. Stochastic gradient descent needs a learning rate."
)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Neural Networks", "neural network"),
        ("  neural \n\t networks. ", "neural network"),
        ("“Neural networks”,", "neural network"),
        ("Database Policies", "database policy"),
        ("search indexes", "search index"),
        ("batches", "batch"),
        ("GPUs", "gpu"),
        ("the network's", "the network"),
        ("ＮＥＵＲＡＬ　ＮＥＴＷＯＲＫＳ", "neural network"),  # full-width forms fold by NFKC
    ],
)
def test_normalise_concept_lowercases_collapses_trims_and_folds_the_plural(text: str, key: str) -> None:
    assert normalise_concept(text) == key


@pytest.mark.parametrize(
    "word",
    ["analysis", "status", "corpus", "class", "bias", "physics", "series", "news", "data", "gas", "its"],
)
def test_fold_plural_leaves_words_that_are_not_plurals(word: str) -> None:
    assert fold_plural(word) == word


@pytest.mark.parametrize(
    ("plural", "singular"),
    [("networks", "network"), ("queries", "query"), ("classes", "class"), ("boxes", "box"), ("keys", "key")],
)
def test_fold_plural_folds_regular_plurals(plural: str, singular: str) -> None:
    assert fold_plural(plural) == singular


def test_fold_plural_knows_irregular_latin_and_greek_plurals() -> None:
    assert [fold_plural(w) for w in ["indices", "matrices", "analyses", "criteria"]] == [
        "index",
        "matrix",
        "analysis",
        "criterion",
    ]


def test_only_the_last_word_of_a_phrase_is_folded() -> None:
    assert normalise_concept("sales taxes") == "sales tax"


def test_extraction_finds_the_recurring_phrases_first() -> None:
    concepts = extract_concepts(NEURAL)
    keys = [c.key for c in concepts]
    assert keys[0] == "neural network"
    assert "stochastic gradient descent" in keys
    assert len(concepts) <= 8


def test_extracted_keys_are_normalised_and_labels_read_as_written() -> None:
    by_key = {c.key: c for c in extract_concepts(NEURAL, max_concepts=20)}
    assert by_key["neural network"].label == "neural networks"  # sentence-start capital dropped
    assert by_key["gpu"].label == "GPUs"
    assert all(key == normalise_concept(key) for key in by_key)


def test_scores_are_normalised_with_the_best_at_one() -> None:
    concepts = extract_concepts(NEURAL)
    assert concepts[0].score == 1.0
    assert all(0 < c.score <= 1.0 for c in concepts)
    assert [c.score for c in concepts] == sorted((c.score for c in concepts), reverse=True)


def test_extraction_is_deterministic() -> None:
    first = extract_concepts(NEURAL)
    extract_concepts("Other text about graph databases and graph queries.")
    assert extract_concepts(NEURAL) == first


def test_max_concepts_caps_the_result() -> None:
    assert len(extract_concepts(NEURAL, max_concepts=3)) == 3
    assert extract_concepts(NEURAL, max_concepts=0) == []


def test_numbers_single_letters_urls_and_emails_are_not_concepts() -> None:
    text = (
        "In 2023 the 42 results, i.e. x, y and z, were 3.14 and 1,000 - see https://example.com/a/b "
        "or mail ops@example.org. The quick brown fox jumps over the lazy dog near the riverbank today."
    )
    keys = [c.key for c in extract_concepts(text, max_concepts=50)]
    assert keys == ["quick brown fox jump", "lazy dog", "riverbank today", "mail", "result"]


def test_runs_longer_than_four_words_are_dropped() -> None:
    keys = [c.key for c in extract_concepts("Alpha beta gamma delta epsilon. Zeta eta theta.")]
    assert keys == ["zeta eta theta"]


def test_text_of_stop_words_numbers_and_punctuation_has_no_concepts() -> None:
    assert extract_concepts("") == []
    assert extract_concepts("It is what it is, and then some: 1, 2, 3 ... 2024!") == []


def test_query_concepts_give_every_one_to_three_word_run_longest_first() -> None:
    assert query_concepts("How do convolutional neural networks handle images?") == [
        "convolutional neural network",
        "neural networks handle",
        "networks handle image",
        "convolutional neural",
        "neural network",
        "networks handle",
        "handle image",
        "convolutional",
        "neural",
        "network",
        "handle",
        "image",
    ]


def test_query_concepts_match_the_keys_extracted_from_documents() -> None:
    document_keys = {c.key for c in extract_concepts(NEURAL, max_concepts=20)}
    assert "neural network" in set(query_concepts("what are Neural Networks?")) & document_keys
    assert "stochastic gradient descent" in query_concepts("Stochastic Gradient Descent, explained")


def test_query_concepts_of_stop_words_only_are_empty() -> None:
    assert query_concepts("what is it?") == []
    assert query_concepts("") == []


def test_concepts_are_values() -> None:
    assert Concept("a b", "A b", 1.0) == Concept("a b", "A b", 1.0)


def test_no_phrase_runs_across_a_heading_or_a_paragraph_break() -> None:
    text = "# Scaling\n\n## Workers\nAdd uvicorn workers to serve clients\n\nSticky sessions are not needed"
    keys = {concept.key for concept in extract_concepts(text)}
    assert {"scaling", "worker", "add uvicorn worker", "serve client", "sticky session"} <= keys
    assert not any("scaling worker" in key or "client sticky" in key for key in keys)
