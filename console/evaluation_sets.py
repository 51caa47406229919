"""Evaluation sets in the console: the list and a new set, a set's questions, an import (a BEIR
directory, a CSV or a JSONL file) with its report of refused rows, a run started with the search's
settings (queued for the background worker), the set's runs charted over time, and — from the
playground — "this hit answers the question".

Sets are kept by the people who keep their library: staff every set, a library's managers the sets
of the libraries they manage (access.managed_libraries); anyone else is refused in words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from access.principal import Principal
from console.access import console_view, managed_libraries
from mnemosyne.evaluation import runs, services, tasks
from mnemosyne.evaluation.models import EvaluationSet, Run, RunStatus
from mnemosyne.evaluation.set_imports import import_file
from mnemosyne.library import selectors
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import Chunk
from mnemosyne.search.types import SEARCH_TYPES

QUESTIONS_PER_PAGE = 50
RUNS_SHOWN = 100
# An import's files, together: a set's questions, not a corpus (a BEIR directory's corpus.jsonl
# is sent by the browser with the rest, and not read).
MAX_IMPORT_BYTES = 64 * 1024 * 1024
READ_FILES = (".csv", ".jsonl", ".tsv")
SKIPPED_FILES = ("corpus.jsonl",)
CHART_WIDTH = 480
CHART_HEIGHT = 120
CHART_PAD = 6
# The measures the chart draws, each a line.
CHARTED = ("ndcg@10", "success@3")


def visible_sets(request: HttpRequest) -> QuerySet[EvaluationSet]:
    return _kept(managed_libraries(request.user))


def _kept(managed: frozenset[int] | None) -> QuerySet[EvaluationSet]:
    """The sets of these libraries (None: every set)."""
    found = EvaluationSet.objects.select_related("library")
    return found if managed is None else found.filter(library_id__in=managed)


def get_set(request: HttpRequest, uid: str) -> EvaluationSet:
    found = visible_sets(request).filter(uid=uid).first()
    if found is None:
        raise Http404("no such evaluation set")
    return found


@console_view
def sets(request: HttpRequest, principal: Principal) -> HttpResponse:
    managed = managed_libraries(request.user)
    libraries = selectors.libraries().order_by("name")
    if managed is not None:
        libraries = libraries.filter(id__in=managed)
    problem = ""
    if request.method == "POST":
        library = libraries.filter(uid=request.POST.get("library", "")).first()
        try:
            if library is None:
                raise InvalidArgument("choose one of your libraries for the set")
            made = services.create_set(
                name=request.POST.get("name", ""),
                library=library,
                description=request.POST.get("description", ""),
                user=request.user,
            )
        except InvalidArgument as exc:
            problem = str(exc)
        else:
            messages.success(
                request, f"Made the set “{made.name}”. Add questions from the playground or import them."
            )
            return HttpResponseRedirect(reverse("console:evaluation-set", args=[made.uid]))
    listed = _kept(managed).annotate(question_count=Count("questions", distinct=True))
    context = {
        "sets": [(found, found.runs.filter(status=RunStatus.DONE).first()) for found in listed],
        "libraries": list(libraries),
        "problem": problem,
        "posted": request.POST if problem else {},
    }
    return render(request, "console/evaluation_sets.html", context, status=400 if problem else 200)


@dataclass(frozen=True)
class ChartLine:
    measure: str
    points: str
    dots: list[tuple[float, float, str]]


@console_view
def evaluation_set(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    found = get_set(request, uid)
    return _set_page(request, found)


def _set_page(
    request: HttpRequest,
    found: EvaluationSet,
    *,
    report: Any = None,
    problem: str = "",
    run_problem: str = "",
    status: int = 200,
) -> HttpResponse:
    questions = Paginator(
        found.questions.prefetch_related("evidence__item").order_by("position"), QUESTIONS_PER_PAGE
    ).get_page(request.GET.get("page"))
    listed = list(found.runs.select_related("created_by")[:RUNS_SHOWN])
    done = [run for run in reversed(listed) if run.status == RunStatus.DONE]
    context = {
        "set": found,
        "questions": questions,
        "runs": listed,
        "chart": _chart(done),
        "chart_width": CHART_WIDTH,
        "chart_height": CHART_HEIGHT,
        "report": report,
        "problem": problem,
        "run_problem": run_problem,
        "legs": SEARCH_TYPES,
        "active": [run for run in listed if run.status in (RunStatus.QUEUED, RunStatus.RUNNING)],
    }
    return render(request, "console/evaluation_set.html", context, status=status)


def _chart(done: list[Run]) -> list[ChartLine]:
    """The set's finished runs, oldest first, as one polyline per charted measure (0 to 1 high)."""
    if not done:
        return []
    step = (CHART_WIDTH - 2 * CHART_PAD) / max(1, len(done) - 1)
    lines = []
    for measure in CHARTED:
        dots = []
        for index, run in enumerate(done):
            value = float(run.measures.get(measure, 0.0))
            x = round(CHART_PAD + index * step, 1)
            y = round(CHART_HEIGHT - CHART_PAD - value * (CHART_HEIGHT - 2 * CHART_PAD), 1)
            dots.append(
                (x, y, f"{run.label or run.uid} ({run.created_at:%Y-%m-%d %H:%M}): {measure} {value}")
            )
        lines.append(ChartLine(measure=measure, points=" ".join(f"{x},{y}" for x, y, _ in dots), dots=dots))
    return lines


@require_POST
@console_view
def import_questions(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    found = get_set(request, uid)
    uploaded = request.FILES.getlist("files")
    if sum(file.size or 0 for file in uploaded if _read(file.name or "")) > MAX_IMPORT_BYTES:
        return _set_page(
            request, found, problem=f"The files are over {MAX_IMPORT_BYTES // 2**20} MB together.", status=400
        )
    files = {file.name or "": file.read() for file in uploaded if _read(file.name or "")}
    if not files:
        return _set_page(
            request, found, problem="Choose a CSV or JSONL file, or a BEIR directory.", status=400
        )
    try:
        report = import_file(found, files, split=request.POST.get("split", "test"))
    except InvalidArgument as exc:
        return _set_page(request, found, problem=str(exc), status=400)
    return _set_page(request, found, report=report)


def _read(name: str) -> bool:
    base = name.rsplit("/", 1)[-1].lower()
    return base.endswith(READ_FILES) and base not in SKIPPED_FILES


@require_POST
@console_view
def start_run(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    found = get_set(request, uid)
    try:
        settings = _settings(request)
        run = runs.start(found, settings, label=request.POST.get("label", ""), user=request.user)
    except InvalidArgument as exc:
        return _set_page(request, found, run_problem=str(exc), status=400)
    tasks.queue(run)
    return HttpResponseRedirect(reverse("console:evaluation-run", args=[run.uid]))


def _settings(request: HttpRequest) -> runs.RunSettings:
    """The run form's settings, read strictly (the search checks their ranges: runs.start)."""
    posted = request.POST
    legs = [leg for leg in SEARCH_TYPES if leg in posted.getlist("legs")]
    if not legs:
        raise InvalidArgument("choose at least one leg to run")

    def number(name: str) -> float | None:
        text = posted.get(name, "").strip()
        if not text:
            return None
        try:
            return float(text)
        except ValueError:
            raise InvalidArgument(f"{name} must be a number from 0 to 1, or left empty") from None

    limit = posted.get("limit", "10").strip()
    if not limit.isdigit():
        raise InvalidArgument("limit must be a whole number from 1 to 100")
    return runs.RunSettings(
        search_types=legs,
        alpha=number("alpha"),
        rerank=posted.get("rerank") == "on",
        diversity=number("diversity"),
        limit=int(limit),
    )


@require_POST
@console_view
def answers(request: HttpRequest, principal: Principal) -> HttpResponse:
    """The playground's "this hit answers the question": the query, as a question of the chosen set,
    with the hit's page (or the hit itself) as its evidence."""
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = reverse("console:playground")
    found = get_set(request, request.POST.get("set", ""))
    chunk = Chunk.objects.select_related("item__collection__library").filter(
        uid=request.POST.get("chunk", "")
    )
    hit = chunk.filter(library__in=selectors.libraries()).first()
    if hit is None:
        raise Http404("no such passage")
    try:
        question = services.add_answering_chunk(
            found, question=request.POST.get("question", ""), chunk=hit, origin="playground"
        )
    except InvalidArgument as exc:
        messages.error(request, str(exc))
    else:
        where = f"page {hit.page}" if hit.page is not None else "this passage"
        messages.success(
            request,
            f"“{question.text}” is answered by {where} of “{hit.item.title}” in the set “{found.name}” "
            f"({found.questions.count()} questions).",
        )
    return HttpResponseRedirect(back)


def sets_by_library(request: HttpRequest) -> dict[str, list[EvaluationSet]]:
    """The sets this person keeps, by their library's uid (the playground offers them per hit)."""
    try:
        kept = visible_sets(request)
    except PermissionDenied:  # someone who keeps no set is offered none
        return {}
    found: dict[str, list[EvaluationSet]] = {}
    for each in kept.order_by("name"):
        found.setdefault(each.library.uid, []).append(each)
    return found
