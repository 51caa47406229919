"""Reciprocal rank fusion: a pure function, checked without a database."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from mnemosyne.search.fusion import RRF_K, Fused, K, weighted_rrf


def reciprocal_rank_fusion(rankings: Mapping[str, Sequence[K]], *, k: int = RRF_K) -> list[Fused[K]]:
    """Plain RRF: score(d) = sum of 1 / (k + rank(d)), every leg weighing 1."""
    return weighted_rrf(rankings, {}, k=k)


def keys(fused: list[Fused[str]]) -> list[str]:
    return [entry.key for entry in fused]


def test_the_default_k_is_60() -> None:
    assert RRF_K == 60
    (only,) = reciprocal_rank_fusion({"vector": ["a"]})
    assert only.score == 1 / 61


def test_a_score_is_the_sum_of_one_over_k_plus_rank_across_legs() -> None:
    fused = reciprocal_rank_fusion({"vector": ["a", "b", "c"], "keyword": ["c", "a"]})
    scores = {entry.key: entry.score for entry in fused}
    # summed in leg order, as the function does, so the floats match exactly
    assert scores == {
        "a": 0.0 + 1 / (60 + 1) + 1 / (60 + 2),
        "b": 0.0 + 1 / (60 + 2),
        "c": 0.0 + 1 / (60 + 3) + 1 / (60 + 1),
    }
    assert keys(fused) == ["a", "c", "b"]


def test_a_custom_k_changes_the_scores() -> None:
    fused = reciprocal_rank_fusion({"vector": ["a", "b"], "keyword": ["b"]}, k=1)
    assert {entry.key: entry.score for entry in fused} == {"a": 1 / 2, "b": 1 / 3 + 1 / 2}
    assert keys(fused) == ["b", "a"]


def test_a_document_both_legs_like_beats_the_top_of_a_single_leg() -> None:
    fused = reciprocal_rank_fusion({"vector": ["solo", "both"], "keyword": ["other", "both"]})
    assert keys(fused)[0] == "both"
    assert fused[0].score == 2 / 62 > 1 / 61


def test_a_document_both_legs_rank_low_loses_to_the_top_of_a_single_leg() -> None:
    # 2 / (60 + 70) < 1 / 61: agreement far down both lists is weaker than a clear first place
    fillers_v = [f"v{i}" for i in range(69)]
    fillers_k = [f"k{i}" for i in range(69)]
    fused = reciprocal_rank_fusion(
        {"vector": ["solo", *fillers_v[1:], "both"], "keyword": [*fillers_k, "both"]}
    )
    ranks = {entry.key: entry.ranks for entry in fused}
    assert ranks["both"] == {"vector": 70, "keyword": 70}
    assert keys(fused).index("solo") < keys(fused).index("both")


def test_it_records_each_legs_one_based_rank() -> None:
    fused = reciprocal_rank_fusion({"vector": ["a", "b"], "keyword": ["b", "c", "a"]})
    assert {entry.key: entry.ranks for entry in fused} == {
        "a": {"vector": 1, "keyword": 3},
        "b": {"vector": 2, "keyword": 1},
        "c": {"keyword": 2},
    }


def test_a_document_listed_twice_in_one_leg_counts_once_at_its_best_rank() -> None:
    fused = reciprocal_rank_fusion({"vector": ["a", "b", "a", "a"]})
    by_key = {entry.key: entry for entry in fused}
    assert by_key["a"].ranks == {"vector": 1}
    assert by_key["a"].score == 1 / 61
    # the later positions of "a" still occupy ranks: "b" stays second
    assert by_key["b"].ranks == {"vector": 2}
    assert len(fused) == 2


@pytest.mark.parametrize("rankings", [{}, {"vector": []}, {"vector": [], "keyword": []}])
def test_no_results_fuse_to_nothing(rankings: dict[str, list[str]]) -> None:
    assert reciprocal_rank_fusion(rankings) == []


def test_a_single_leg_keeps_its_order() -> None:
    order = ["e", "b", "z", "a", "m"]
    fused = reciprocal_rank_fusion({"vector": order})
    assert keys(fused) == order
    assert [entry.ranks for entry in fused] == [{"vector": rank} for rank in range(1, 6)]


@pytest.mark.parametrize("k", [0, -1, -60])
def test_it_rejects_k_below_one(k: int) -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        reciprocal_rank_fusion({"vector": ["a"]}, k=k)


def test_equal_scores_keep_first_seen_order() -> None:
    fused = reciprocal_rank_fusion({"vector": ["x", "y"], "keyword": ["y", "x"]})
    assert fused[0].score == fused[1].score
    assert keys(fused) == ["x", "y"]

    fused = reciprocal_rank_fusion({"vector": ["p"], "keyword": ["q"], "graph": ["r"]})
    assert keys(fused) == ["p", "q", "r"]


def test_keys_may_be_any_hashable() -> None:
    fused = reciprocal_rank_fusion({"vector": [(1, "a"), (2, "b")], "keyword": [(2, "b")]})
    assert [entry.key for entry in fused] == [(2, "b"), (1, "a")]
