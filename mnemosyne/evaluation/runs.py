"""Runs: every question of a set searched with one configuration, each answer scored and kept,
the set's measures computed from them.

A run is queued (start), then executed — by the background worker (tasks.run_evaluation), or in
the caller's process (`evaluate --set NAME`). It reports its progress as it goes, stops before its
next question once a cancel is asked for, and resumes after the questions it already answered
when a worker died under it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import metadata
from typing import Any

from django.conf import settings as django_settings
from django.contrib.auth.models import AnonymousUser, User
from django.utils import timezone

from mnemosyne.embedding import Embedder, get_embedder
from mnemosyne.evaluation import measures, scoring
from mnemosyne.evaluation.models import Answer, EvaluationSet, Evidence, Question, Run, RunStatus
from mnemosyne.library.errors import InvalidArgument, LibraryError
from mnemosyne.library.models import Chunk
from mnemosyne.search.rerankers import get_reranker
from mnemosyne.search.service import SEARCH_TYPES, SearchRequest, search, validate

logger = logging.getLogger(__name__)

# Progress is written, and a cancel looked for, at most this often.
PROGRESS_SECONDS = 1.0
SUCCESS_DEPTHS = (1, 3, 10)
# The measures a run reports, in the order they are shown.
MEASURES = ("success@1", "success@3", "success@10", "mrr@10", "ndcg@10", "recall@k")


@dataclass(frozen=True)
class RunSettings:
    """The search arguments of a run (those of the `search` tool a run can vary)."""

    search_types: list[str] = field(default_factory=lambda: list(SEARCH_TYPES))
    alpha: float | None = None
    rerank: bool = True
    diversity: float | None = None
    limit: int = 10

    def request(self, query: str, library_uid: str | None) -> SearchRequest:
        return SearchRequest(
            query=query,
            library_uid=library_uid,
            limit=self.limit,
            search_types=list(self.search_types),
            rerank=self.rerank,
            alpha=self.alpha,
            diversity=self.diversity,
        )


def start(
    evaluation_set: EvaluationSet,
    settings: RunSettings,
    *,
    label: str = "",
    user: User | AnonymousUser | None = None,
) -> Run:
    """A run of the set, queued (tasks.queue runs it in the background; execute, here); InvalidArgument,
    before anything is stored, for settings the search refuses."""
    validate(settings.request("?", evaluation_set.library.uid))
    total = evaluation_set.questions.count()
    if not total:
        raise InvalidArgument(f"the set {evaluation_set.name!r} has no questions to run")
    reranker = get_reranker() if settings.rerank else None
    configuration = {
        "search": asdict(settings),
        # The model the library's vectors are of (vector_models claims it; a search's query is
        # embedded by it or refused): read from the library, not by loading the model here.
        "embedding_model": evaluation_set.library.embedding_model or django_settings.EMBEDDING_MODEL,
        "reranker": reranker.name if reranker is not None else None,
        "version": _version(),
        "chunks": Chunk.objects.filter(item__collection__library=evaluation_set.library).count(),
    }
    return Run.objects.create(
        evaluation_set=evaluation_set,
        label=label.strip()[:200],
        configuration=configuration,
        total=total,
        created_by=user if isinstance(user, User) else None,
    )


def _version() -> str:
    try:
        return metadata.version("mnemosyne")
    except metadata.PackageNotFoundError:
        return "unknown"


def settings_of(run: Run) -> RunSettings:
    return RunSettings(**run.configuration["search"])


def cancel(run: Run) -> None:
    """Ask the run to stop: a queued one is cancelled at once, a running one before its next
    question, a stalled one (its worker gone) at once, with the measures of what it answered."""
    Run.objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(
        status=RunStatus.CANCELLED, cancel_requested=True, finished_at=timezone.now()
    )
    Run.objects.filter(pk=run.pk, status=RunStatus.RUNNING).update(cancel_requested=True)
    run.refresh_from_db()
    if run.stalled:
        _finish(run, RunStatus.CANCELLED, run.answers.count())


def resume(run: Run) -> bool:
    """Whether the run, stalled (its worker gone), was queued again: it goes on after the
    questions it answered."""
    if not run.stalled:
        return False
    # Resuming is asking it to go on: a cancel asked for before its worker stopped is withdrawn.
    Run.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now(), cancel_requested=False)
    run.refresh_from_db()
    return True


def execute(
    run: Run,
    *,
    embedder: Embedder | None = None,
    on_question: Callable[[int, int], None] | None = None,
) -> Run:
    """Search every question the run has not answered yet, keep each answer, then the measures."""
    claimed = Run.objects.filter(pk=run.pk, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]).update(
        status=RunStatus.RUNNING, heartbeat_at=timezone.now()
    )
    Run.objects.filter(pk=run.pk, started_at=None).update(started_at=timezone.now())
    run.refresh_from_db()
    if not claimed:
        return run  # cancelled before it began, or already finished
    embedder = embedder or get_embedder()
    settings = settings_of(run)
    library_uid = run.evaluation_set.library.uid
    answered = set(run.answers.values_list("question_id", flat=True))
    done = len(answered)
    last_report = time.monotonic()
    try:
        for question, expected in _questions(run.evaluation_set, skip=answered):
            started = time.perf_counter()
            response = search(settings.request(question.text, library_uid), embedder=embedder)
            ms = (time.perf_counter() - started) * 1000
            scored = scoring.score(response.hits, expected)
            Answer.objects.create(
                run=run,
                question=question,
                rank=scored.rank,
                ndcg_at_10=scored.ndcg_at_10,
                reciprocal_rank=scored.reciprocal_rank,
                recall=scored.recall,
                ms=ms,
                hits=scored.hits,
            )
            done += 1
            if on_question is not None:
                on_question(done, run.total)
            if time.monotonic() - last_report >= PROGRESS_SECONDS:
                last_report = time.monotonic()
                Run.objects.filter(pk=run.pk).update(done=done, heartbeat_at=timezone.now())
                if Run.objects.filter(pk=run.pk, cancel_requested=True).exists():
                    return _finish(run, RunStatus.CANCELLED, done)
    except LibraryError as exc:
        return _finish(run, RunStatus.FAILED, done, error=str(exc))
    except Exception:
        logger.exception("evaluation run %s failed", run.uid)
        _finish(
            run, RunStatus.FAILED, done, error="the run failed on an internal error; the server log says why"
        )
        raise
    return _finish(run, RunStatus.DONE, done)


def _questions(evaluation_set: EvaluationSet, *, skip: set[int]) -> Any:
    """The set's questions not in `skip`, in order, each with its evidence — read in pages."""
    page = 500
    ids = list(
        evaluation_set.questions.exclude(id__in=skip).order_by("position").values_list("id", flat=True)
    )
    for start in range(0, len(ids), page):
        chunk_ids = ids[start : start + page]
        expected: dict[int, list[scoring.Expected]] = {}
        for evidence in Evidence.objects.filter(question_id__in=chunk_ids).select_related("item"):
            expected.setdefault(evidence.question_id, []).append(
                scoring.Expected(
                    item_uid=evidence.item.uid,
                    pages=tuple(evidence.pages),
                    chunk_uid=evidence.chunk_uid,
                    grade=evidence.grade,
                )
            )
        for question in Question.objects.filter(id__in=chunk_ids).order_by("position"):
            yield question, expected.get(question.id, [])


def _finish(run: Run, status: str, done: int, *, error: str = "") -> Run:
    summary = summarise(run) if status != RunStatus.FAILED or done else {}
    Run.objects.filter(pk=run.pk).update(
        status=status, done=done, measures=summary, error=error, finished_at=timezone.now()
    )
    run.refresh_from_db()
    return run


def summarise(run: Run) -> dict[str, Any]:
    """The run's measures over the questions it answered: success@1/3/10, MRR@10, nDCG@10,
    recall@k (k: the run's limit), latency p50/p95 in ms, the questions, the wall time and the
    searches per second."""
    rows = list(run.answers.values_list("rank", "ndcg_at_10", "reciprocal_rank", "recall", "ms"))
    count = len(rows)
    if not count:
        return {"questions": 0}
    latencies = [row[4] for row in rows]
    seconds = (timezone.now() - (run.started_at or run.created_at)).total_seconds()
    summary: dict[str, Any] = {
        f"success@{depth}": sum(1 for row in rows if row[0] is not None and row[0] <= depth) / count
        for depth in SUCCESS_DEPTHS
    }
    summary |= {
        "mrr@10": sum(row[2] for row in rows) / count,
        "ndcg@10": sum(row[1] for row in rows) / count,
        "recall@k": sum(row[3] for row in rows) / count,
        "k": settings_of(run).limit,
        "latency_ms": {
            "p50": measures.percentile(latencies, 0.5),
            "p95": measures.percentile(latencies, 0.95),
        },
        "questions": count,
        "search_seconds": sum(latencies) / 1000,
        "searches_per_second": count / (sum(latencies) / 1000) if sum(latencies) else 0.0,
        "wall_seconds": seconds,
    }
    return {
        name: round(value, 4) if isinstance(value, float) else value for name, value in summary.items()
    } | {"latency_ms": {name: round(value, 2) for name, value in summary["latency_ms"].items()}}
