"""Evaluation runs over MCP: list_evaluation_sets, run_evaluation (a background run, the console's
own; an MCP task for a client with tasks) and get_evaluation_run. As in the console, a library's
evaluation sets and runs are its managers' (a caller that manages no library sees none): a set or
run of a library the caller does not manage is answered as one that does not exist."""

from datetime import datetime
from typing import Any, Literal

from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from access.principal import Principal
from mcp_server.tools.schemas import LibraryRef
from mcp_server.tools.search import SearchType
from mcp_server.tools.spec import Arguments, ToolSpec
from mnemosyne.evaluation import runs, tasks
from mnemosyne.evaluation.models import EvaluationSet, Run
from mnemosyne.library.errors import NotFound
from mnemosyne.library.selectors import within_boundary
from mnemosyne.search import service

# Sets listed at most (a library has a handful).
MAX_SETS = 100
# It adds a run (each call another), and changes nothing of the libraries.
ADDS_A_RUN = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)


class EvaluationSetRef(BaseModel):
    uid: str
    name: str


class RunState(BaseModel):
    run_id: str = Field(description="The run: get_evaluation_run follows it.")
    status: Literal["queued", "running", "done", "failed", "cancelled"] = Field(
        description="queued (for a background worker), running, done, failed (error says why) or cancelled."
    )
    evaluation_set: EvaluationSetRef
    library: LibraryRef
    label: str
    done: int = Field(description="Questions answered so far.")
    total: int = Field(description="Questions in the set when the run began.")
    measures: dict[str, Any] = Field(
        description="Over the questions answered: success@1/3/10, mrr@10, ndcg@10, recall@k, latency_ms "
        "p50/p95, questions, searches_per_second (empty until it ends)."
    )
    error: str = Field(description="Why it failed (empty otherwise).")
    created_at: datetime
    finished_at: datetime | None


class EvaluationSetInfo(BaseModel):
    evaluation_set_uid: str
    name: str
    description: str
    library: LibraryRef
    questions: int
    last_run: RunState | None = Field(description="Its latest run, if any.")


class EvaluationSets(BaseModel):
    sets: list[EvaluationSetInfo]


class ListEvaluationSetsArguments(Arguments):
    library_uid: str | None = Field(
        default=None, min_length=1, max_length=64, description="Only this library."
    )


class RunEvaluationArguments(Arguments):
    evaluation_set_uid: str = Field(
        min_length=1, max_length=64, description="The set to run (list_evaluation_sets lists them)."
    )
    label: str = Field(default="", max_length=200, description="A name for the run, to tell it from others.")
    search_types: list[SearchType] = Field(
        default=["vector", "fulltext", "graph"],
        min_length=1,
        description="The search legs each question runs.",
    )
    rerank: bool = Field(
        default=True, description="Rerank each question's results when a reranker is configured."
    )
    alpha: float | None = Field(
        default=None, ge=0, le=1, description="The search's hybrid weighting; omit for the default."
    )
    diversity: float | None = Field(
        default=None, ge=0, le=1, description="The search's diversity; omit for none."
    )
    limit: int = Field(
        default=10, ge=1, le=service.MAX_LIMIT, description=f"Results per question, 1-{service.MAX_LIMIT}."
    )


class GetEvaluationRunArguments(Arguments):
    run_id: str = Field(min_length=1, max_length=64, description="The run (run_id from run_evaluation).")


def _managed_sets(caller: Principal) -> Any:
    sets = within_boundary(EvaluationSet.objects.select_related("library"), "library_id")
    return sets if caller.managed_ids is None else sets.filter(library_id__in=caller.managed_ids)


def _managed_set(caller: Principal, uid: str) -> EvaluationSet:
    found: EvaluationSet | None = _managed_sets(caller).filter(uid=uid).first()
    if found is None:
        raise NotFound("evaluation set", uid)
    return found


def list_evaluation_sets(caller: Principal, args: ListEvaluationSetsArguments) -> EvaluationSets:
    sets = _managed_sets(caller)
    if args.library_uid is not None:
        sets = sets.filter(library__uid=args.library_uid)
    listed = []
    for found in sets.order_by("library__name", "name")[:MAX_SETS]:
        last = Run.objects.filter(evaluation_set=found).select_related("evaluation_set__library").first()
        listed.append(
            EvaluationSetInfo(
                evaluation_set_uid=found.uid,
                name=found.name,
                description=found.description,
                library=LibraryRef(uid=found.library.uid, name=found.library.name),
                questions=found.questions.count(),
                last_run=run_state(last) if last is not None else None,
            )
        )
    return EvaluationSets(sets=listed)


def run_evaluation(caller: Principal, args: RunEvaluationArguments) -> RunState:
    found = _managed_set(caller, args.evaluation_set_uid)
    settings = runs.RunSettings(
        search_types=list(args.search_types),
        alpha=args.alpha,
        rerank=args.rerank,
        diversity=args.diversity,
        limit=args.limit,
    )
    run = runs.start(found, settings, label=args.label)
    Run.objects.filter(pk=run.pk).update(requested_by=caller.caller_key)
    tasks.queue(run)
    return run_state(run)


def get_evaluation_run(caller: Principal, args: GetEvaluationRunArguments) -> RunState:
    runs_seen = Run.objects.select_related("evaluation_set__library").filter(uid=args.run_id)
    run = runs_seen.filter(evaluation_set__in=_managed_sets(caller)).first()
    if run is None:
        raise NotFound("evaluation run", args.run_id)
    return run_state(run)


def run_state(run: Run) -> RunState:
    found = run.evaluation_set
    return RunState(
        run_id=run.uid,
        status=run.status,  # type: ignore[arg-type]  # RunStatus's values, as the literal lists them
        evaluation_set=EvaluationSetRef(uid=found.uid, name=found.name),
        library=LibraryRef(uid=found.library.uid, name=found.library.name),
        label=run.label,
        done=run.done,
        total=run.total,
        measures=run.measures or {},
        error=run.error,
        created_at=run.created_at,
        finished_at=run.finished_at,
    )


def render_run(state: RunState) -> str:
    head = f"Run {state.run_id} of {state.evaluation_set.name} ({state.library.name}): {state.status}"
    if state.status in ("queued", "running"):
        return f"{head}, {state.done} of {state.total} questions answered."
    measures = state.measures
    shown = ", ".join(
        f"{name} {measures[name]}"
        for name in ("ndcg@10", "success@3", "mrr@10", "recall@k")
        if name in measures
    )
    error = f" — {state.error}" if state.error else ""
    return f"{head} after {state.done} of {state.total} questions{': ' + shown if shown else ''}.{error}"


def render_sets(result: EvaluationSets) -> str:
    if not result.sets:
        return "No evaluation sets in the libraries this caller manages."
    lines = []
    for found in result.sets:
        last = f"; last run {found.last_run.status}" if found.last_run else ""
        where = f"{found.name} ({found.library.name})"
        lines.append(f"- [{found.evaluation_set_uid}] {where}: {found.questions} questions{last}")
    return "\n".join(lines)


LIST_EVALUATION_SETS = ToolSpec(
    name="list_evaluation_sets",
    handler=list_evaluation_sets,
    arguments=ListEvaluationSetsArguments,
    result=EvaluationSets,
    title="List evaluation sets",
    description=(
        "The evaluation sets (questions with their expected evidence) of the libraries this caller manages, "
        "each with its number of questions and its latest run's measures. run_evaluation runs one."
    ),
    render=render_sets,
)
RUN_EVALUATION = ToolSpec(
    name="run_evaluation",
    handler=run_evaluation,
    arguments=RunEvaluationArguments,
    result=RunState,
    title="Run an evaluation set",
    description=(
        "Search every question of an evaluation set with the settings given and measure the results "
        "(success@k, MRR, nDCG@10, recall, latency), as the console's evaluation runs do. A background "
        "worker runs it: the answer is a run_id to follow with get_evaluation_run (a client with MCP tasks "
        "gets a task). Only for a library this caller manages; needs a token allowed to write."
    ),
    render=render_run,
    annotations=ADDS_A_RUN.model_copy(),
    writes=True,
)
GET_EVALUATION_RUN = ToolSpec(
    name="get_evaluation_run",
    handler=get_evaluation_run,
    arguments=GetEvaluationRunArguments,
    result=RunState,
    title="An evaluation run's progress and measures",
    description=(
        "Where an evaluation run is (questions answered of its total) and, once it ended, its measures."
    ),
    render=render_run,
)
