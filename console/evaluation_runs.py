"""An evaluation run in the console: its progress while the worker runs it (polled), a cancel, its
configuration and measures, every question's rank with the hits it got, its answers as CSV; and two
runs of a set compared question by question (comparison.py) with the measures' deltas and the
paired test's p-value."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from access.principal import Principal
from console.access import console_view
from console.evaluation_sets import get_set, visible_sets
from mnemosyne.evaluation import runs, tasks
from mnemosyne.evaluation.comparison import compare
from mnemosyne.evaluation.exports import answer_rows
from mnemosyne.evaluation.models import Run, RunStatus

ANSWERS_PER_PAGE = 50
SHOWS = {"all": "every question", "missed": "questions it did not answer in its results"}
VERDICTS = ("worse", "better", "same")


def get_run(request: HttpRequest, uid: str) -> Run:
    found = (
        Run.objects.select_related("evaluation_set__library", "created_by")
        .filter(uid=uid, evaluation_set__in=visible_sets(request))
        .first()
    )
    if found is None:
        raise Http404("no such run")
    return found


@console_view
def run(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    found = get_run(request, uid)
    active = found.status in (RunStatus.QUEUED, RunStatus.RUNNING)
    if request.GET.get("part") == "progress":
        response = render(request, "console/evaluation_progress.html", {"run": found, "active": active})
        if not active:
            # Finished while the page polled: the page again, with the measures and the answers.
            response["HX-Refresh"] = "true"
        return response
    show = request.GET.get("show", "all")
    show = show if show in SHOWS else "all"
    answers = found.answers.select_related("question").order_by("question__position")
    if show == "missed":
        answers = answers.filter(rank=None)
    context = {
        "run": found,
        "set": found.evaluation_set,
        "active": active,
        "answers": Paginator(answers, ANSWERS_PER_PAGE).get_page(request.GET.get("page")),
        "show": show,
        "shows": SHOWS,
        "measures": [(name, found.measures[name]) for name in runs.MEASURES if name in found.measures],
        "search": found.configuration.get("search", {}),
    }
    return render(request, "console/evaluation_run.html", context)


@require_POST
@console_view
def cancel(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    runs.cancel(get_run(request, uid))
    return HttpResponseRedirect(reverse("console:evaluation-run", args=[uid]))


@require_POST
@console_view
def resume(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    found = get_run(request, uid)
    if runs.resume(found):
        tasks.queue(found)
        messages.success(
            request, f"Queued again: it goes on after the {found.answers.count()} questions answered."
        )
    else:
        messages.info(request, "The run is not stalled: nothing to resume.")
    return HttpResponseRedirect(reverse("console:evaluation-run", args=[uid]))


@console_view
def export(request: HttpRequest, principal: Principal, uid: str) -> StreamingHttpResponse:
    found = get_run(request, uid)
    response = StreamingHttpResponse(answer_rows(found), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{found.uid}.csv"'
    return response


@console_view
def comparison(request: HttpRequest, principal: Principal, uid: str) -> HttpResponse:
    found = get_set(request, uid)
    done = found.runs.filter(status__in=[RunStatus.DONE, RunStatus.CANCELLED])
    a = done.filter(uid=request.GET.get("a", "")).first()
    b = done.filter(uid=request.GET.get("b", "")).first()
    if a is None or b is None or a == b:
        return render(
            request,
            "console/evaluation_compare.html",
            {"set": found, "problem": "Choose two different finished runs of this set to compare."},
            status=400,
        )
    compared = compare(a, b)
    show = request.GET.get("show", "changed")
    shown = compared.changed if show != "all" else compared.questions
    ordered = sorted(
        shown, key=lambda change: (VERDICTS.index(change.verdict), change.ndcg_b - change.ndcg_a)
    )
    context = {
        "set": found,
        "comparison": compared,
        "questions": Paginator(ordered, ANSWERS_PER_PAGE).get_page(request.GET.get("page")),
        "show": "all" if show == "all" else "changed",
        "a_search": a.configuration.get("search", {}),
        "b_search": b.configuration.get("search", {}),
    }
    return render(request, "console/evaluation_compare.html", context)
