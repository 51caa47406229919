"""The activity views: the query log (mnemosyne/library/query_log.py) as a person who may see it
reads it — staff everything, a library's managers the calls on their libraries only: recent calls,
searches that found nothing and those whose best hit scored lowest, the slowest, calls per tool
with their latency percentiles, calls per day (from the day roll-ups and today's calls), and
errors by reason. Read from PostgreSQL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from access.principal import Principal
from console.access import console_view, managed_libraries
from mnemosyne.library import query_log
from mnemosyne.library.models import QueryLog

ROWS = 30
DAYS = (1, 7, 30)
CHART_HEIGHT = 80
BAR_STEP = 24


@dataclass(frozen=True)
class DayBar:
    day: str
    calls: int
    height: int
    x: int

    @property
    def y(self) -> int:
        return CHART_HEIGHT - self.height


@console_view
def activity(request: HttpRequest, principal: Principal) -> HttpResponse:
    rows, libraries = _visible(request)
    asked = request.GET.get("days", "7")
    days = int(asked) if asked in {str(choice) for choice in DAYS} else 7
    since = timezone.now() - timedelta(days=days)
    window = rows.filter(at__gte=since)
    searches = window.filter(tool="search", outcome="ok")
    context: dict[str, Any] = {
        "days": days,
        "day_choices": DAYS,
        "recent": list(rows.select_related("library").order_by("-at")[:ROWS]),
        "nothing_found": list(searches.filter(hits=0).select_related("library").order_by("-at")[:ROWS]),
        "lowest": list(
            searches.filter(hits__gt=0).select_related("library").order_by("top_score", "-at")[:ROWS]
        ),
        "slowest": list(window.select_related("library").order_by("-ms")[:ROWS]),
        "per_tool": (loads := query_log.load(days, libraries))[0],
        "errors": list(
            window.exclude(outcome="ok")
            .values("tool", "outcome", "reason")
            .annotate(calls=Count("id"))
            .order_by("-calls", "tool")[:ROWS]
        ),
        "chart": (chart := _bars(loads[1])),
        "chart_width": max(1, len(chart)) * BAR_STEP,
        "chart_height": CHART_HEIGHT,
        "kept_days": settings.QUERY_LOG_DAYS,
    }
    return render(request, "console/activity.html", context)


def _visible(request: HttpRequest) -> tuple[QuerySet[QueryLog], frozenset[int] | None]:
    """Every row for staff; a manager's libraries' rows for a manager (and those libraries);
    refused for anyone else."""
    managed = managed_libraries(request.user)
    if managed is None:
        return QueryLog.objects.all(), None
    return QueryLog.objects.filter(library_id__in=managed), managed


def _bars(per_day: list[tuple[date, int]]) -> list[DayBar]:
    most = max((calls for _, calls in per_day), default=0)
    return [
        DayBar(
            day=day.isoformat(),
            calls=calls,
            height=max(1, round(CHART_HEIGHT * calls / most)) if most else 0,
            x=index * BAR_STEP,
        )
        for index, (day, calls) in enumerate(per_day)
    ]
