"""Two runs of one set, question by question: which questions the second answers better (a higher
nDCG@10, or the same and a better rank), worse, or the same, with the hits each got; the measures'
deltas; and whether the difference in nDCG@10 could be chance — a paired randomisation test
(scipy.stats.permutation_test, the per-question differences' signs flipped at random)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mnemosyne.evaluation.models import Answer, Run
from mnemosyne.evaluation.runs import MEASURES

RESAMPLES = 9999
# Resamples drawn at a time: bounds the memory of a 10,000-question comparison.
BATCH = 200
SEED = 20261127


@dataclass(frozen=True)
class QuestionChange:
    question: str
    verdict: str  # better, worse, same
    rank_a: int | None
    rank_b: int | None
    ndcg_a: float
    ndcg_b: float
    hits_a: list[dict[str, Any]]
    hits_b: list[dict[str, Any]]

    @property
    def sides(self) -> list[tuple[str, list[dict[str, Any]]]]:
        return [("A", self.hits_a), ("B", self.hits_b)]


@dataclass(frozen=True)
class Comparison:
    a: Run
    b: Run
    # (measure, a, b, b - a)
    deltas: list[tuple[str, float, float, float]]
    questions: list[QuestionChange]
    better: int
    worse: int
    same: int
    # Two-sided p of the paired randomisation test on nDCG@10; None with fewer than two questions.
    p_value: float | None

    @property
    def changed(self) -> list[QuestionChange]:
        return [change for change in self.questions if change.verdict != "same"]


def compare(a: Run, b: Run) -> Comparison:
    """The two runs over the questions both answered (a run cancelled half way compares on its half)."""
    answers_a = _answers(a)
    answers_b = _answers(b)
    shared = [question_id for question_id in answers_a if question_id in answers_b]
    changes = [_change(answers_a[question_id], answers_b[question_id]) for question_id in shared]
    deltas = []
    for name in MEASURES:
        value_a, value_b = a.measures.get(name), b.measures.get(name)
        if isinstance(value_a, int | float) and isinstance(value_b, int | float):
            deltas.append((name, value_a, value_b, round(value_b - value_a, 4)))
    for name in ("p50", "p95"):
        value_a = (a.measures.get("latency_ms") or {}).get(name)
        value_b = (b.measures.get("latency_ms") or {}).get(name)
        if value_a is not None and value_b is not None:
            deltas.append((f"latency {name} (ms)", value_a, value_b, round(value_b - value_a, 2)))
    return Comparison(
        a=a,
        b=b,
        deltas=deltas,
        questions=changes,
        better=sum(1 for change in changes if change.verdict == "better"),
        worse=sum(1 for change in changes if change.verdict == "worse"),
        same=sum(1 for change in changes if change.verdict == "same"),
        p_value=paired_p_value(
            [answers_a[question_id].ndcg_at_10 for question_id in shared],
            [answers_b[question_id].ndcg_at_10 for question_id in shared],
        ),
    )


def paired_p_value(a: list[float], b: list[float]) -> float | None:
    """Two-sided p that the mean of b - a differs from 0 by chance (paired randomisation)."""
    if len(a) < 2:
        return None
    first, second = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if np.array_equal(first, second):
        return 1.0
    # Imported here: scipy.stats takes over a second to import, and every process that serves the
    # console imports this module; only a comparison of two runs needs it.
    from scipy import stats

    result = stats.permutation_test(
        (first, second),
        lambda x, y, axis: np.mean(y - x, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=RESAMPLES,
        batch=BATCH,
        alternative="two-sided",
        rng=np.random.default_rng(SEED),
    )
    return float(result.pvalue)


def _answers(run: Run) -> dict[int, Answer]:
    return {
        answer.question_id: answer
        for answer in run.answers.select_related("question").order_by("question__position")
    }


def _change(a: Answer, b: Answer) -> QuestionChange:
    if abs(b.ndcg_at_10 - a.ndcg_at_10) > 1e-9:
        verdict = "better" if b.ndcg_at_10 > a.ndcg_at_10 else "worse"
    elif a.rank != b.rank:
        verdict = "better" if (b.rank or 10**9) < (a.rank or 10**9) else "worse"
    else:
        verdict = "same"
    return QuestionChange(
        question=a.question.text,
        verdict=verdict,
        rank_a=a.rank,
        rank_b=b.rank,
        ndcg_a=a.ndcg_at_10,
        ndcg_b=b.ndcg_at_10,
        hits_a=a.hits,
        hits_b=b.hits,
    )
