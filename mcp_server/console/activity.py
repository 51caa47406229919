"""The activity views: the query log (mnemosyne/library/query_log.py) as a person who may see it
reads it — staff everything, a library's managers the calls on their libraries only: recent calls,
searches that found nothing and those whose best hit scored lowest, the slowest, calls per tool
with their latency percentiles, calls per day, and errors by reason. Read from PostgreSQL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.db.models import Count, QuerySet
from django.db.models.functions import TruncDate
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from mcp_server.auth.library_access import reach_of
from mcp_server.auth.principal import Principal
from mcp_server.console.access import console_view
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
    y: int


@console_view
def activity(request: HttpRequest, principal: Principal) -> HttpResponse:
    rows = _visible(request)
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
        "per_tool": _per_tool(window),
        "errors": list(
            window.exclude(outcome="ok")
            .values("tool", "outcome", "reason")
            .annotate(calls=Count("id"))
            .order_by("-calls", "tool")[:ROWS]
        ),
        "chart": (chart := _per_day(window)),
        "chart_width": max(1, len(chart)) * BAR_STEP,
        "chart_height": CHART_HEIGHT,
        "kept_days": settings.QUERY_LOG_DAYS,
    }
    return render(request, "console/activity.html", context)


def _visible(request: HttpRequest) -> QuerySet[QueryLog]:
    """Every row for staff; a manager's libraries' rows for a manager; refused for anyone else."""
    if request.user.is_staff:
        return QueryLog.objects.all()
    managed = reach_of(request.user).managed
    if managed is None:
        return QueryLog.objects.all()
    if not managed:
        raise PermissionDenied(
            "The query log is shown to staff, and to a library's managers for their libraries."
        )
    return QueryLog.objects.filter(library_id__in=managed)


def _per_tool(window: QuerySet[QueryLog]) -> list[dict[str, Any]]:
    """Calls, errors and latency percentiles per tool, in one query."""
    sql, params = window.values("tool", "ms", "outcome").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT tool, count(*),
                   count(*) FILTER (WHERE outcome <> 'ok'),
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY ms),
                   percentile_cont(0.95) WITHIN GROUP (ORDER BY ms)
            FROM ({sql}) AS calls GROUP BY tool ORDER BY count(*) DESC, tool
            """,
            params,
        )
        return [
            {"tool": tool, "calls": calls, "errors": errors, "p50": round(p50, 1), "p95": round(p95, 1)}
            for tool, calls, errors, p50, p95 in cursor
        ]


def _per_day(window: QuerySet[QueryLog]) -> list[DayBar]:
    counts = list(
        window.annotate(day=TruncDate("at")).values("day").annotate(calls=Count("id")).order_by("day")
    )
    most = max((row["calls"] for row in counts), default=0)
    return [
        DayBar(
            day=row["day"].isoformat(),
            calls=row["calls"],
            height=max(1, round(CHART_HEIGHT * row["calls"] / most)) if most else 0,
            x=index * BAR_STEP,
            y=CHART_HEIGHT - (max(1, round(CHART_HEIGHT * row["calls"] / most)) if most else 0),
        )
        for index, row in enumerate(counts)
    ]
