"""Retrieval quality measures, as BEIR (pytrec_eval) computes them."""

from __future__ import annotations

import math

import pytest

from mnemosyne.evaluation.measures import best_per_document, mrr_at_k, ndcg_at_k, percentile, recall_at_k


def test_ndcg_is_one_for_the_ideal_order_and_discounts_by_log2_of_the_rank() -> None:
    judged = {"a": 2, "b": 1}
    assert ndcg_at_k(["a", "b", "x"], judged) == pytest.approx(1.0)
    ideal = 2 + 1 / math.log2(3)
    assert ndcg_at_k(["b", "a"], judged) == pytest.approx((1 + 2 / math.log2(3)) / ideal)
    assert ndcg_at_k(["x", "a"], judged) == pytest.approx((2 / math.log2(3)) / ideal)


def test_ndcg_counts_only_the_first_k_and_ignores_zero_grades() -> None:
    assert ndcg_at_k(["x", "y", "a"], {"a": 1}, k=2) == 0.0
    assert ndcg_at_k(["a"], {"a": 1, "z": 0}) == pytest.approx(1.0)
    assert ndcg_at_k(["a"], {}) == 0.0


def test_recall_is_the_share_of_relevant_documents_found_within_k() -> None:
    judged = {"a": 1, "b": 1, "c": 0}
    assert recall_at_k(["a", "x", "b"], judged, k=100) == 1.0
    assert recall_at_k(["a", "x", "b"], judged, k=2) == 0.5
    assert recall_at_k(["a"], {"c": 0}) == 0.0


def test_mrr_is_the_reciprocal_rank_of_the_first_relevant_document_within_k() -> None:
    assert mrr_at_k(["x", "y", "a", "b"], {"a": 1, "b": 1}) == pytest.approx(1 / 3)
    assert mrr_at_k(["x", "a"], {"a": 1}, k=1) == 0.0


def test_percentile_interpolates_between_the_nearest_values() -> None:
    assert percentile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 0.95) == pytest.approx(4.8)
    assert percentile([7.0], 0.95) == 7.0
    assert percentile([], 0.5) == 0.0


def test_chunk_hits_collapse_to_documents_at_their_best_chunks_rank() -> None:
    hits = [("d2", 0.9), ("d1", 0.8), ("d2", 0.7), ("d3", 0.6), ("d1", 0.5)]
    assert best_per_document(hits) == ["d2", "d1", "d3"]
