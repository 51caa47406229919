"""The rerank step of a search: one implementation, with the checks a reranker's answer must pass."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from mnemosyne.search import reranking
from mnemosyne.search.hits import HitChunk, HitItem, Named
from mnemosyne.search.service import RankedHit


class Scores:
    name = "fixed"

    def __init__(self, scores: list[float]) -> None:
        self.scores = scores

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        return self.scores


def hits(count: int) -> list[RankedHit]:
    # Unsaved chunks whose stored text is missing: the reranker is given their previews.
    return [
        RankedHit(
            chunk=HitChunk(
                n,
                f"chk_{n}",
                0,
                "text",
                "",
                "",
                f"chunk {n}",
                "",
                None,
                None,
                None,
                0,
                0,
                0,
                f"nowhere/{n}.txt",
                item=HitItem(1, "itm_1", "Item", "item.txt", "document"),
                collection=Named(1, "col_1", "c"),
                library=Named(1, "lib_1", "l"),
            ),
            score=1.0 - n / 10,
            legs={},
        )
        for n in range(count)
    ]


@pytest.mark.parametrize(
    ("scores", "reason"),
    [([0.9], "returned 1 scores for 3 documents"), ([0.1, float("nan"), 0.3], "not a finite number")],
)
def test_a_reranker_answer_that_fails_the_checks_leaves_the_fused_order(
    monkeypatch: pytest.MonkeyPatch, scores: list[float], reason: str
) -> None:
    monkeypatch.setattr(reranking, "get_reranker", lambda: Scores(scores))
    fused = hits(3)
    outcome = reranking.rerank_hits("q", fused, requested=True)
    assert not outcome.applied and reason in outcome.note
    assert outcome.hits == fused


def test_the_head_is_reordered_by_the_reranker_and_the_tail_keeps_its_place(
    monkeypatch: pytest.MonkeyPatch, settings
) -> None:
    settings.RERANK_TOP_N = 3
    monkeypatch.setattr(reranking, "get_reranker", lambda: Scores([0.1, 0.9, 0.5]))
    fused = hits(5)
    outcome = reranking.rerank_hits("q", fused, requested=True)
    assert outcome.applied
    assert [hit.chunk.uid for hit in outcome.hits] == ["chk_1", "chk_2", "chk_0", "chk_3", "chk_4"]
    assert [hit.rerank_score for hit in outcome.hits] == [0.9, 0.5, 0.1, None, None]
