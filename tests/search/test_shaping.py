"""Result shaping: near-duplicate collapse, MMR, response budgets (pure)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from mnemosyne.search import shaping
from mnemosyne.search.shaping import (
    collapse_near_duplicates,
    estimate_tokens,
    fit_budget,
    group_heads,
    jaccard,
    maximal_marginal_relevance,
    shingles,
)
from mnemosyne.search.units import Located

BASE = "Run pg_dump every night and keep seven daily copies and four weekly copies in cold storage."


def test_identical_and_near_identical_texts_fold_into_the_first() -> None:
    texts = [BASE, "Scaling needs more workers.", BASE.replace("Run", "run"), BASE + " Also weekly."]
    kept, folded = collapse_near_duplicates(texts)
    assert kept == [0, 1]
    assert folded == {0: [2, 3]}


def test_empty_texts_fold_into_the_first_empty_one() -> None:
    assert collapse_near_duplicates(["", ""]) == ([0], {0: [1]})
    assert collapse_near_duplicates(["", "a b c", "", "a b c"]) == ([0, 1], {0: [2], 1: [3]})
    assert collapse_near_duplicates([]) == ([], {})


def test_different_texts_are_all_kept() -> None:
    texts = ["alpha beta gamma delta", "epsilon zeta eta theta", "iota kappa lambda mu"]
    assert collapse_near_duplicates(texts) == ([0, 1, 2], {})


def test_shingles_and_jaccard() -> None:
    assert shingles("a b") == frozenset({("a", "b")})
    assert shingles("One two, three four five") == frozenset(
        {("one", "two", "three", "four"), ("two", "three", "four", "five")}
    )
    assert shingles("") == frozenset()
    assert jaccard(frozenset(), frozenset()) == 1.0
    assert jaccard(frozenset({("x",)}), frozenset({("y",)})) == 0.0
    assert jaccard(frozenset({("x",), ("y",)}), frozenset({("y",), ("z",)})) == pytest.approx(1 / 3)


def test_texts_of_very_different_lengths_are_never_near_duplicates() -> None:
    short = "alpha beta gamma delta epsilon"
    long = short + " " + " ".join(f"word{i}" for i in range(20))
    assert collapse_near_duplicates([short, long]) == ([0, 1], {})


def test_mmr_with_no_diversity_keeps_relevance_order() -> None:
    vectors = [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
    assert maximal_marginal_relevance([0.9, 0.8, 0.1], vectors, diversity=0.0, limit=3) == [0, 1, 2]


def test_mmr_prefers_a_different_result_over_a_redundant_one() -> None:
    vectors = [[1.0, 0.0], [0.99, 0.01], [0.0, 1.0]]
    assert maximal_marginal_relevance([0.9, 0.85, 0.6], vectors, diversity=0.7, limit=3)[:2] == [0, 2]


def test_mmr_respects_the_limit_and_rejects_bad_diversity() -> None:
    assert maximal_marginal_relevance([1.0, 0.5], [[1.0], [1.0]], diversity=0.5, limit=1) == [0]
    assert maximal_marginal_relevance([], [], diversity=0.5, limit=3) == []
    with pytest.raises(ValueError, match="diversity"):
        maximal_marginal_relevance([1.0], [[1.0]], diversity=1.5, limit=1)


def mmr_by_definition(
    relevance: list[float], vectors: list[list[float]], diversity: float, limit: int
) -> list[int]:
    """MMR as written: one candidate at a time, every similarity computed pairwise."""

    def cosine(a: list[float], b: list[float]) -> float:
        norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
        return sum(x * y for x, y in zip(a, b, strict=True)) / norms if norms else 0.0

    low, span = min(relevance), max(relevance) - min(relevance)
    normalised = [(r - low) / span if span > 0 else 1.0 for r in relevance]
    chosen: list[int] = []
    while len(chosen) < min(limit, len(relevance)):
        best = max(
            (i for i in range(len(relevance)) if i not in chosen),
            key=lambda i: (
                (1 - diversity) * normalised[i]
                # The penalty starts at 0: an item opposed to everything chosen gains nothing.
                - diversity * max([0.0, *(cosine(vectors[i], vectors[j]) for j in chosen)]),
                -i,
            ),
        )
        chosen.append(best)
    return chosen


def test_mmr_over_a_matrix_of_vectors_orders_as_the_definition_does() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(120, 16))
    relevance = list(rng.random(120))
    for diversity in (0.0, 0.3, 0.7, 1.0):
        expected = mmr_by_definition(relevance, vectors.tolist(), diversity, 100)
        assert maximal_marginal_relevance(relevance, vectors, diversity=diversity, limit=100) == expected


def test_the_budget_keeps_what_fits_but_always_one() -> None:
    assert fit_budget([100, 100, 100], 250) == 2
    assert fit_budget([100, 100], 1000) == 2
    assert fit_budget([5000, 10], 100) == 1
    assert fit_budget([], 100) == 0


def test_token_estimates_err_on_the_high_side() -> None:
    assert estimate_tokens("x" * 300) >= 75


def pairwise_collapse(texts: list[str], threshold: float = 0.8) -> tuple[list[int], dict[int, list[int]]]:
    """The definition, comparing every text with every kept one."""
    kept: list[int] = []
    folded: dict[int, list[int]] = {}
    for index, text in enumerate(texts):
        match = next((k for k in kept if jaccard(shingles(text), shingles(texts[k])) >= threshold), None)
        if match is None:
            kept.append(index)
        else:
            folded.setdefault(match, []).append(index)
    return kept, folded


# Both ways of counting the pairs' shared shingles: listed from the runs of equal hashes (a
# search's head), and the sparse product (many copies of one text).
both_counts = pytest.mark.parametrize("run_pairs", [shaping.RUN_PAIRS, 0], ids=["runs", "product"])


@both_counts
def test_collapsing_through_the_shingle_index_matches_the_pairwise_definition(
    run_pairs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shaping, "RUN_PAIRS", run_pairs)
    rng = random.Random(7)
    # Words in ASCII texts and in others, cased and punctuated: the same word is one word in both.
    words = ["tide", "flood", "ebb", "river", "delta", "silt", "barrage", "turbine", "sluice", "lock"]
    words += ["Zürich", "naïve", "TIDE,", "flood—ebb", "snake_case", "42", "Ébb"]
    for _ in range(300):
        base = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 14))) for _ in range(6)]
        # Near copies of a few texts, some empty ones, and unrelated ones, in any order.
        texts = [*base, *(text + " " + rng.choice(words) for text in base[:3]), "", ""]
        rng.shuffle(texts)
        assert collapse_near_duplicates(texts) == pairwise_collapse(texts)


@both_counts
def test_collapsing_abstract_sized_texts_matches_the_pairwise_definition_at_any_threshold(
    run_pairs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shaping, "RUN_PAIRS", run_pairs)
    # Texts of a search's length (60-90 words) and near copies of them with words dropped, as
    # indexes of revised documents hold: the prefix filter must find every similar kept text.
    rng = random.Random(11)
    vocabulary = [f"w{number}" for number in range(400)]
    for _ in range(40):
        originals = [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(60, 90))) for _ in range(5)]
        copies = [
            " ".join(word for word in rng.choice(originals).split() if rng.random() >= drop)
            for drop in (rng.choice((0.0, 0.02, 0.1)) for _ in range(30))
        ]
        texts = originals + copies + ["", "w1 w2"]
        rng.shuffle(texts)
        for threshold in (0.3, 0.5, 0.8, 0.95, 1.0):
            kept, folded = collapse_near_duplicates(texts, threshold)
            assert (kept, folded) == pairwise_collapse(texts, threshold)
            if threshold == 0.95:  # both outcomes occur: exact copies folded, others kept
                assert folded and len(kept) > 6


def test_groups_are_ordered_by_their_best_chunk_and_list_the_others_best_first() -> None:
    # Chunks 1-6 in ranked order: items 10 and 20; item 10's pages 1 and 2; chunk 4 runs over
    # pages 2-3 and counts for page 2; chunk 9 was not located (deleted meanwhile).
    located = {
        1: Located(10, 2, 3, "c1"),
        2: Located(20, 1, None, "c2"),
        3: Located(10, 1, None, "c3"),
        4: Located(10, 2, None, "c4"),
        5: Located(20, 1, None, "c5"),
        6: Located(30, None, None, "c6"),
    }
    keys = [1, 2, 9, 3, 4, 5, 6]
    assert group_heads(keys, located, "item") == [(1, [3, 4]), (2, [5]), (6, [])]
    assert group_heads(keys, located, "page") == [(1, [4]), (2, [5]), (3, []), (6, [])]
    assert group_heads([], located, "item") == []
