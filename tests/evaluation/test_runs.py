"""Runs of an evaluation set: every question searched and scored, the configuration and measures
kept; cancelled before the next question, resumed after the last one answered; two runs compared
question by question; the answers exported with formula cells escaped; run by the background task."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from mnemosyne.evaluation import runs, tasks
from mnemosyne.evaluation.comparison import compare, paired_p_value
from mnemosyne.evaluation.exports import answer_rows
from mnemosyne.evaluation.models import EvaluationSet, Run, RunStatus
from mnemosyne.evaluation.services import add_answering_chunk, create_set
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import Chunk
from tests.evaluation.corpus import science_set

# Legs run in threads of their own, on connections of their own: the data must be committed.
pytestmark = pytest.mark.django_db(transaction=True)

FULL_TEXT = runs.RunSettings(search_types=["fulltext"], rerank=False)


@pytest.fixture
def evaluation_set() -> EvaluationSet:
    return science_set()


def test_a_run_keeps_its_configuration_measures_and_every_answer(evaluation_set: EvaluationSet) -> None:
    run = runs.start(evaluation_set, FULL_TEXT, label="full text only")
    assert run.status == RunStatus.QUEUED and run.total == 7
    seen: list[int] = []
    run = runs.execute(run, on_question=lambda done, total: seen.append(done))
    assert seen == list(range(1, 8))
    assert run.status == RunStatus.DONE and run.done == 7 and run.finished_at is not None
    configuration = run.configuration
    assert configuration["search"] == {
        "search_types": ["fulltext"],
        "alpha": None,
        "rerank": False,
        "diversity": None,
        "limit": 10,
    }
    assert configuration["embedding_model"] and configuration["version"]
    assert configuration["reranker"] is None
    assert configuration["chunks"] == Chunk.objects.count()
    measures = run.measures
    assert measures["questions"] == 7 and measures["k"] == 10
    # Six questions find their evidence first; the last finds nothing of it.
    assert measures["success@1"] == measures["success@10"] == round(6 / 7, 4)
    assert measures["success@1"] <= measures["success@3"] <= measures["success@10"]
    assert 0 < measures["ndcg@10"] <= measures["success@10"]
    assert 0 < measures["latency_ms"]["p50"] <= measures["latency_ms"]["p95"]
    assert measures["searches_per_second"] > 0
    report_answer = run.answers.get(question__text__startswith="which statement")
    # The evidence is the report's second page, and only that page counts.
    assert report_answer.rank == 1
    assert report_answer.hits[0]["page"] == 2 and report_answer.hits[0]["relevant"] is True
    assert not any(hit["relevant"] for hit in report_answer.hits[1:])
    missed = run.answers.get(question__text__startswith="a question about nothing")
    assert missed.rank is None and missed.ndcg_at_10 == 0.0


def test_settings_the_search_refuses_and_an_empty_set_are_refused_before_a_run_is_stored(
    evaluation_set: EvaluationSet,
) -> None:
    with pytest.raises(InvalidArgument, match="alpha"):
        runs.start(evaluation_set, runs.RunSettings(alpha=1.5))
    empty = create_set(name="Empty", library=evaluation_set.library)
    with pytest.raises(InvalidArgument, match="no questions"):
        runs.start(empty, FULL_TEXT)
    assert not Run.objects.exists()


def test_a_cancelled_run_stops_before_its_next_question(
    evaluation_set: EvaluationSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    queued = runs.start(evaluation_set, FULL_TEXT)
    runs.cancel(queued)
    assert queued.status == RunStatus.CANCELLED
    assert runs.execute(queued).answers.count() == 0

    monkeypatch.setattr(runs, "PROGRESS_SECONDS", 0.0)
    running = runs.start(evaluation_set, FULL_TEXT)

    def cancel_after_two(done: int, total: int) -> None:
        if done == 2:
            runs.cancel(Run.objects.get(pk=running.pk))

    finished = runs.execute(running, on_question=cancel_after_two)
    assert finished.status == RunStatus.CANCELLED
    assert finished.done == finished.answers.count() == 2
    # Its measures are those of the questions it answered.
    assert finished.measures["questions"] == 2


class WorkerStopped(BaseException):
    """The process running the run went away (as a killed worker does): nothing is finished."""


def test_a_run_whose_worker_died_resumes_after_its_answered_questions(evaluation_set: EvaluationSet) -> None:
    run = runs.start(evaluation_set, FULL_TEXT)

    def die_after_three(done: int, total: int) -> None:
        if done == 3:
            raise WorkerStopped

    with pytest.raises(WorkerStopped):
        runs.execute(run, on_question=die_after_three)
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.answers.count() == 3
    first_answers = set(run.answers.values_list("id", flat=True))

    # Silent for longer than a worker ever is: stalled, and only then resumed.
    assert not run.stalled and not runs.resume(run)
    Run.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    run.refresh_from_db()
    assert run.stalled and runs.resume(run) and not run.stalled

    resumed = runs.execute(run)
    assert resumed.status == RunStatus.DONE and resumed.done == 7
    assert resumed.answers.count() == 7
    assert first_answers <= set(resumed.answers.values_list("id", flat=True))


def test_a_stalled_run_is_cancelled_at_once_with_the_measures_of_what_it_answered(
    evaluation_set: EvaluationSet,
) -> None:
    run = runs.start(evaluation_set, FULL_TEXT)

    def die_after_two(done: int, total: int) -> None:
        if done == 2:
            raise WorkerStopped

    with pytest.raises(WorkerStopped):
        runs.execute(run, on_question=die_after_two)
    Run.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    run.refresh_from_db()
    runs.cancel(run)
    assert run.status == RunStatus.CANCELLED and run.done == 2 and run.measures["questions"] == 2


def test_two_runs_compare_question_by_question(evaluation_set: EvaluationSet) -> None:
    # The second run's library gains nothing; its settings differ: only the first hit counts.
    a = runs.execute(runs.start(evaluation_set, FULL_TEXT, label="limit 10"))
    b = runs.execute(
        runs.start(evaluation_set, runs.RunSettings(search_types=["fulltext"], rerank=False, limit=1))
    )
    same = compare(a, b)
    assert same.better == same.worse == 0 and same.same == 7
    assert same.p_value == 1.0
    assert all(delta == 0 for name, _, _, delta in same.deltas if not name.startswith("latency"))

    # A question answered by two passages: the limit-1 run cannot find both.
    for source in ("tides", "volcano"):
        chunk = Chunk.objects.filter(item__source=source).first()
        assert chunk is not None
        add_answering_chunk(
            evaluation_set, question="where do tides and magma rise", chunk=chunk, origin="test"
        )
    c = runs.execute(runs.start(evaluation_set, FULL_TEXT))
    d = runs.execute(
        runs.start(evaluation_set, runs.RunSettings(search_types=["fulltext"], rerank=False, limit=1))
    )
    comparison = compare(c, d)
    assert (comparison.better, comparison.worse, comparison.same) == (0, 1, 7)
    (changed,) = comparison.changed
    assert changed.question == "where do tides and magma rise"
    assert changed.ndcg_b < changed.ndcg_a == 1.0 and len(changed.hits_b) == 1 and len(changed.hits_a) > 1
    deltas = {name: delta for name, _, _, delta in comparison.deltas}
    assert deltas["ndcg@10"] < 0 and deltas["success@1"] == 0
    assert comparison.p_value is not None and 0 < comparison.p_value <= 1


def test_the_paired_test_tells_a_steady_gain_from_noise() -> None:
    assert paired_p_value([0.2] * 40, [0.6] * 40) == pytest.approx(0, abs=1e-3)
    noise = paired_p_value([0.5, 0.6] * 20, [0.6, 0.5] * 20)
    assert noise is not None and noise > 0.5
    assert paired_p_value([0.5], [0.6]) is None


def test_the_exported_answers_escape_formula_cells(evaluation_set: EvaluationSet) -> None:
    chunk = Chunk.objects.filter(item__source="formula").first()
    assert chunk is not None
    add_answering_chunk(
        evaluation_set, question="which document would a spreadsheet run", chunk=chunk, origin="test"
    )
    run = runs.execute(runs.start(evaluation_set, FULL_TEXT))
    rows = list(csv.reader(io.StringIO("".join(answer_rows(run)))))
    assert rows[0][:3] == ["question", "rank", "ndcg@10"]
    assert len(rows) == 1 + 8
    formula_row = next(row for row in rows if row[0].startswith("which document"))
    assert formula_row[1] == "1"
    assert formula_row[6] == '\'=HYPERLINK("http://x")'


def test_the_background_task_runs_a_queued_run(
    evaluation_set: EvaluationSet, django_capture_on_commit_callbacks: object
) -> None:
    run = runs.start(evaluation_set, FULL_TEXT)
    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        tasks.queue(run)
    queued = DBTaskResult.objects.get()
    assert queued.task_path == "mnemosyne.evaluation.tasks.run_evaluation"
    assert queued.args_kwargs["kwargs"] == {"run_uid": run.uid}
    assert tasks.run_evaluation.call(run_uid=run.uid) == {"run": run.uid, "status": "done", "done": 7}
    assert tasks.run_evaluation.call(run_uid="run_gone") == {"run": "run_gone", "status": "gone"}
