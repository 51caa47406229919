"""The playground: every argument of `search` as a form whose address can be shared, run as the
signed-in person through the one tool-call path (tool_calls.execute, transport "console") — so its
numbers are exactly what MCP `search` with `return_metadata: ["explain"]` answers — and, to
compare, a second configuration beside the first with the hits that moved marked."""

from __future__ import annotations

import contextvars
import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render

from access import decision
from access.principal import Principal
from access.refusals import Refusal
from console.access import TRANSPORT, console_view
from console.evaluation_sets import sets_by_library
from mcp_server import tool_calls
from mcp_server.tools.catalog import spec_named
from mnemosyne.evaluation.models import EvaluationSet
from mnemosyne.lib.blocking import Unavailable, bracketed
from mnemosyne.library import selectors
from mnemosyne.library.models import LibraryType

LEGS = ("vector", "fulltext", "graph")
# The playground's searches, each on a thread that outlives the request (see _run).
_SEARCHES = ThreadPoolExecutor(max_workers=4, thread_name_prefix="console-search")
# What each leg's score is, for the reader of the table.
LEG_SCORES = {
    "vector": "cosine",
    "fulltext": "BM25",
    "graph": "concept weight",
    "named_vector": "cosine, in the named documents",
    "named_fulltext": "BM25, in the named documents",
}
DEFAULT_LIMIT = 10
# Always asked for: the playground shows why each hit ranks where it does.
RETURN_METADATA = ["explain", "duplicates"]
# Without full-text terms to go by, query words shorter than this, and these, are not marked: they
# say nothing of why a hit ranks.
MIN_HIGHLIGHT = 3
UNMARKED = frozenset(
    (  # noqa: SIM905 - a list of words reads best as words
        "the and for from with that this these those are was were what which who whom how why "
        "when where does did into its their they then than have has had not but our your you can"
    ).split()
)


@dataclass
class Configuration:
    """One column: the form's values, the tool's arguments they make, and what came of them."""

    prefix: str
    values: dict[str, Any]
    arguments: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None
    rows: list[HitRow] = field(default_factory=list)
    elapsed_ms: float | None = None

    @property
    def tools_call(self) -> str:
        """The MCP request that gives the same answer, to copy."""
        return json.dumps({"name": "search", "arguments": self.arguments}, indent=2, ensure_ascii=False)


@dataclass(frozen=True)
class LegRow:
    name: str
    scale: str
    rank: int | None
    score: float | None
    # Its score's parts: (query term or concept, share), largest first.
    parts: list[tuple[str, float]]


@dataclass
class HitRow:
    rank: int
    hit: dict[str, Any]
    legs: list[LegRow]
    preview: list[tuple[str, bool]]
    # Against the first configuration (the second column's hits): "up 2", "down 1", "same", "new";
    # the first column's hits the second has not: "not in B".
    change: str = ""
    # The evaluation sets of the hit's library this person keeps: "this hit answers the question".
    sets: list[EvaluationSet] = field(default_factory=list)


@console_view
def playground(request: HttpRequest, principal: Principal) -> HttpResponse:
    params = request.GET
    first = _configuration(params, "")
    columns = [first]
    comparing = params.get("compare") == "1"
    if comparing:
        columns.append(_configuration(params, "b_", fallback=first.values))
    for column in columns:
        if params.get("q", "").strip() and not column.problems:
            _run(principal, column)
    if comparing and first.result is not None and columns[1].result is not None:
        _mark_moves(first, columns[1])
    kept = sets_by_library(request)
    for column in columns:
        for row in column.rows:
            row.sets = kept.get(row.hit["library"]["uid"], [])
    context = {
        "columns": columns,
        "comparing": comparing,
        "libraries": list(selectors.libraries().order_by("name")),
        "library_types": [choice for choice, _ in LibraryType.choices],
        "legs": LEGS,
        "leg_scores": LEG_SCORES,
        "query": params.get("q", ""),
        "here": request.get_full_path(),
    }
    status = 400 if any(column.problems for column in columns) else 200
    return render(request, "console/playground.html", context, status=status)


def _configuration(params: QueryDict, prefix: str, fallback: dict[str, Any] | None = None) -> Configuration:
    """The form's fields (prefixed for the second column) read strictly: each as sent, else (the
    second column) the first's, else the default — and checked wherever it came from."""
    inherited = fallback or {}

    def pick(name: str, default: Any) -> Any:
        key = f"{prefix}{name}"
        return params.get(key, "").strip() if key in params else inherited.get(name, default)

    values: dict[str, Any] = {name: pick(name, "") for name in ("library", "collection", "type")}
    # A box left unticked is not sent: the form says it was there (legs_sent, rerank_sent); an
    # address without them (typed, or shared) means the tool's defaults.
    legs = params.getlist(f"{prefix}legs")
    sent = legs or f"{prefix}legs_sent" in params
    values["legs"] = [leg for leg in LEGS if leg in legs] if sent else inherited.get("legs", list(LEGS))
    rerank_sent = f"{prefix}rerank_sent" in params
    values["rerank"] = params.get(f"{prefix}rerank") == "on" if rerank_sent else inherited.get("rerank", True)
    values["alpha"], values["diversity"] = pick("alpha", ""), pick("diversity", "")
    values["limit"] = pick("limit", "") or str(DEFAULT_LIMIT)

    submitted = bool(params.get("q", "").strip())
    problems: list[str] = []
    if submitted and not values["legs"]:
        problems.append("Choose at least one leg to run.")
    for name in ("alpha", "diversity"):
        number = _number(values[name]) if values[name] else 0.0
        if number is None or not 0 <= number <= 1:
            problems.append(f"{name} must be a number from 0 to 1, or left empty.")
    if not values["limit"].isdigit() or not 1 <= int(values["limit"]) <= 100:
        problems.append("limit must be a whole number from 1 to 100.")
    configuration = Configuration(prefix=prefix, values=values, problems=problems)
    if submitted and not problems:
        configuration.arguments = _arguments(params.get("q", "").strip(), values)
    return configuration


def _number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if number == number else None


def _arguments(query: str, values: dict[str, Any]) -> dict[str, Any]:
    """The search tool's arguments, as an MCP client would send them: only what is not the default."""
    arguments: dict[str, Any] = {"query": query, "limit": int(values["limit"])}
    for name, argument in (
        ("library", "library_uid"),
        ("collection", "collection_uid"),
        ("type", "library_type"),
    ):
        if values[name]:
            arguments[argument] = values[name]
    if list(values["legs"]) != list(LEGS):
        arguments["search_types"] = list(values["legs"])
    for name in ("alpha", "diversity"):
        if values[name]:
            arguments[name] = float(values[name])
    if not values["rerank"]:
        arguments["rerank"] = False
    arguments["return_metadata"] = list(RETURN_METADATA)
    return arguments


def _run(principal: Principal, column: Configuration) -> None:
    """The search, decided and run as the person (a uid outside what they see reads as missing)."""
    spec = spec_named("search")
    assert spec is not None
    asked = decision.Asked(tool=spec.name, spec=spec, arguments=column.arguments)
    allowed = decision.check_call(principal, asked, transport=TRANSPORT)
    if isinstance(allowed, Refusal):
        column.problems.append(allowed.message)
        return
    call = tool_calls.ToolCall(allowed=allowed, spec=spec, arguments=column.arguments)
    try:
        # Where MCP runs a search: on a long-lived worker thread, its model session and database
        # connection warm — not on the fresh thread Django gives each request under ASGI, where
        # the query's first encoding costs some 20 ms more and the database a new connection.
        context = contextvars.copy_context()
        answer = _SEARCHES.submit(context.run, _executed, call).result()
    except tool_calls.InvalidToolArguments as exc:
        column.problems.append(str(exc))
        return
    except Unavailable as exc:
        column.problems.append(exc.error.message)
        return
    if answer.is_error or answer.structured is None:
        column.problems.append(answer.text)
        return
    column.result = answer.structured
    column.elapsed_ms = answer.meta.get("elapsed_ms")
    terms = _terms(column.arguments["query"], answer.structured["results"])
    column.rows = [_row(rank, hit, terms) for rank, hit in enumerate(answer.structured["results"], start=1)]


def _executed(call: tool_calls.ToolCall) -> tool_calls.ToolAnswer:
    return bracketed(tool_calls.execute, call)


def _row(rank: int, hit: dict[str, Any], terms: re.Pattern[str] | None) -> HitRow:
    explain = hit.get("explain") or {}
    found = explain.get("legs", {})
    # What a leg's score is made of: the query's terms (full text), the concepts (graph).
    parts = {"fulltext": explain.get("terms") or {}, "graph": explain.get("concepts") or {}}
    legs = [
        LegRow(
            name=leg,
            scale=LEG_SCORES.get(leg, ""),
            rank=found[leg]["rank"] if leg in found else None,
            score=found[leg]["score"] if leg in found else None,
            parts=list(parts.get(leg, {}).items()),
        )
        for leg in [*LEGS, *(leg for leg in found if leg not in LEGS)]
    ]
    return HitRow(rank=rank, hit=hit, legs=legs, preview=_highlighted(hit["text_preview"], terms))


def _terms(query: str, results: list[dict[str, Any]]) -> re.Pattern[str] | None:
    """The words to mark: those starting with a term the full-text leg matched (as the index holds
    it: "restor" marks restore and restoring); without any, the query's own words."""
    matched = {term for hit in results for term in ((hit.get("explain") or {}).get("terms") or {})}
    words = matched or {
        word.lower()
        for word in re.findall(r"\w+", query)
        if (len(word) >= MIN_HIGHLIGHT or word.isdigit()) and word.lower() not in UNMARKED
    }
    if not words:
        return None
    alternatives = "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})\w*", re.IGNORECASE)


def _highlighted(text: str, terms: re.Pattern[str] | None) -> list[tuple[str, bool]]:
    """The text in pieces, each a query word (to be marked) or not; the template escapes them all."""
    if terms is None:
        return [(text, False)]
    pieces: list[tuple[str, bool]] = []
    at = 0
    for match in terms.finditer(text):
        if match.start() > at:
            pieces.append((text[at : match.start()], False))
        pieces.append((match.group(0), True))
        at = match.end()
    if at < len(text):
        pieces.append((text[at:], False))
    return pieces


def _mark_moves(first: Configuration, second: Configuration) -> None:
    """The second column's hits against the first's ranks; the first's hits the second lost."""
    before = {row.hit["chunk_uid"]: row.rank for row in first.rows}
    after = {row.hit["chunk_uid"] for row in second.rows}
    for row in second.rows:
        was = before.get(row.hit["chunk_uid"])
        if was is None:
            row.change = "new"
        elif was > row.rank:
            row.change = f"up {was - row.rank}"
        elif was < row.rank:
            row.change = f"down {row.rank - was}"
        else:
            row.change = "same"
    for row in first.rows:
        if row.hit["chunk_uid"] not in after:
            row.change = "not in B"
