"""python manage.py evaluate (--dataset DIR [--split S] | --set NAME) [--save] [--label TEXT]
[--search-types T,T] [--alpha A] [--rerank | --no-rerank] [--limit N] [--fail-under METRIC=VALUE ...]

--dataset: loads a BEIR-layout dataset into a library of its own (once), runs every judged query
of the split through the SearchService, and prints as its last line a JSON object with ndcg@10,
recall@100, mrr@10, queries and latency_ms {p50, p95}. With --save the judged queries also become
the evaluation set "BEIR <name> <split>" of that library, and the run is kept with it (the console
lists, charts and compares it).

--set: runs the evaluation set NAME (made in the console or imported) with the search settings
given, and prints success@1/3/10, mrr@10, ndcg@10, recall@k, latency_ms and questions; --save keeps
the run.

With --fail-under (for a team's CI) it then exits non-zero, naming each measure that fell below
its threshold.
"""

from __future__ import annotations

import json
import sys
from argparse import BooleanOptionalAction
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from mnemosyne.embedding import get_embedder
from mnemosyne.evaluation import runs
from mnemosyne.evaluation.beir import Dataset, as_set, ensure_loaded, evaluate
from mnemosyne.evaluation.models import EvaluationSet, Run, RunStatus
from mnemosyne.lib.schema import require_current_schema
from mnemosyne.library.errors import LibraryError
from mnemosyne.search.rerankers import get_reranker
from mnemosyne.search.service import SEARCH_TYPES, validate
from mnemosyne.storage import get_chunk_store


class Command(BaseCommand):
    help = "Measure search quality on a BEIR-layout dataset or an evaluation set."

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--dataset", type=Path, help="Directory with corpus.jsonl etc.")
        source.add_argument("--set", dest="set_name", metavar="NAME", help="An evaluation set's name.")
        parser.add_argument("--split", default="test", choices=["train", "dev", "test"])
        parser.add_argument(
            "--save", action="store_true", help="Keep the run (and, with --dataset, the set)."
        )
        parser.add_argument("--label", default="", help="A label for the saved run.")
        parser.add_argument(
            "--search-types",
            default=None,
            help=f"Comma-separated legs to run: some of {', '.join(SEARCH_TYPES)} "
            "(default: vector,fulltext for a dataset, every leg for a set).",
        )
        parser.add_argument(
            "--limit",
            type=int,
            default=None,
            help="Results per query, 1-100 (default: 100 for a dataset, 10 for a set).",
        )
        parser.add_argument(
            "--alpha",
            type=float,
            default=None,
            help="Relative-score fusion weight of the vector leg (0 = full text only, 1 = vector only); "
            "default: the configured fusion.",
        )
        parser.add_argument(
            "--fail-under",
            action="append",
            default=[],
            metavar="METRIC=VALUE",
            help=f"Exit non-zero when METRIC ({', '.join(MEASURES)} for a dataset; "
            f"{', '.join(runs.MEASURES)} for a set) is below VALUE, e.g. ndcg@10=0.70; repeat for several.",
        )
        parser.add_argument(
            "--rerank",
            action=BooleanOptionalAction,
            default=None,
            help="Rerank each query's fused head with the configured reranker (RERANK_URL or "
            "RERANK_MODEL_PATH, RERANK_TOP_N results); without one --rerank refuses to run. Default: "
            "off for a dataset, as the search tool does (on when configured) for a set.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        require_current_schema()
        for_set = options["set_name"] is not None
        thresholds = parse_thresholds(options["fail_under"], runs.MEASURES if for_set else MEASURES)
        if options["rerank"] and get_reranker() is None:
            raise CommandError("--rerank needs a reranker: set RERANK_URL or RERANK_MODEL_PATH")
        try:
            measured = self._run_set(options) if for_set else self._run_dataset(options)
        except LibraryError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(json.dumps(measured))
        below = [
            f"{metric} {measured[metric]} is under {floor}"
            for metric, floor in thresholds.items()
            if measured[metric] < floor
        ]
        if below:
            raise CommandError("; ".join(below))

    def _settings(self, options: dict[str, Any], *, legs: str, limit: int, rerank: bool) -> runs.RunSettings:
        given = options["search_types"] or legs
        return runs.RunSettings(
            search_types=[name.strip() for name in given.split(",") if name.strip()],
            alpha=options["alpha"],
            rerank=rerank if options["rerank"] is None else options["rerank"],
            limit=options["limit"] if options["limit"] is not None else limit,
        )

    def _run_set(self, options: dict[str, Any]) -> dict[str, Any]:
        evaluation_set = (
            EvaluationSet.objects.select_related("library").filter(name=options["set_name"]).first()
        )
        if evaluation_set is None:
            names = ", ".join(EvaluationSet.objects.values_list("name", flat=True)[:20]) or "none yet"
            raise CommandError(f"no evaluation set named {options['set_name']!r} (sets: {names})")
        settings = self._settings(options, legs=",".join(SEARCH_TYPES), limit=10, rerank=True)
        run = self._execute(evaluation_set, settings, options)
        return {**run.measures, **({"run": run.uid} if options["save"] else {})}

    def _run_dataset(self, options: dict[str, Any]) -> dict[str, Any]:
        dataset = Dataset(options["dataset"])
        dataset.check(options["split"])
        # Arguments are checked before the corpus is loaded, which can take minutes.
        settings = self._settings(options, legs="vector,fulltext", limit=100, rerank=False)
        validate(settings.request("?", library_uid=None))
        embedder = get_embedder()
        with tqdm(total=dataset.corpus_size(), unit="doc", desc="load", disable=not self._progress) as bar:
            library, _ = ensure_loaded(
                dataset, embedder=embedder, store=get_chunk_store(), on_progress=lambda result: bar.update(1)
            )
        if options["save"]:
            evaluation_set, report = as_set(dataset, options["split"], library)
            for where, why in report.refused:
                self.stderr.write(f"not imported: {where}: {why}")
            run = self._execute(evaluation_set, settings, options)
            return {
                "ndcg@10": run.measures.get("ndcg@10", 0.0),
                "recall@100": run.measures.get("recall@k", 0.0),
                "mrr@10": run.measures.get("mrr@10", 0.0),
                "queries": run.measures.get("questions", 0),
                "latency_ms": run.measures.get("latency_ms", {"p50": 0.0, "p95": 0.0}),
                "run": run.uid,
            }
        template = settings.request("?", library_uid=library.uid)
        with tqdm(unit="query", desc="search", disable=not self._progress) as bar:

            def on_query(done: int, total: int) -> None:
                bar.total = total
                bar.update(1)

            result = evaluate(
                dataset,
                split=options["split"],
                library=library,
                request_template=template,
                embedder=embedder,
                on_query=on_query,
            )
        return dict(json.loads(result.as_json()))

    def _execute(
        self, evaluation_set: EvaluationSet, settings: runs.RunSettings, options: dict[str, Any]
    ) -> Run:
        """The run, in this process; kept with --save, else removed once measured."""
        run = runs.start(evaluation_set, settings, label=options["label"])
        with tqdm(total=run.total, unit="question", desc="search", disable=not self._progress) as bar:
            run = runs.execute(run, on_question=lambda done, total: bar.update(1))
        if run.status != RunStatus.DONE:
            raise CommandError(f"the run {run.status}: {run.error or 'no reason given'}")
        if not options["save"]:
            run.delete()
        return run

    @property
    def _progress(self) -> bool:
        return sys.stderr.isatty()


# The measures a threshold may name: those the last line reports.
MEASURES = ("ndcg@10", "recall@100", "mrr@10")


def parse_thresholds(given: list[str], measures: tuple[str, ...] = MEASURES) -> dict[str, float]:
    """METRIC=VALUE pairs; CommandError, naming the one at fault, before anything runs."""
    thresholds: dict[str, float] = {}
    for text in given:
        metric, sep, value = (part.strip() for part in text.partition("="))
        if not sep or metric not in measures:
            raise CommandError(
                f"--fail-under takes METRIC=VALUE with METRIC one of {', '.join(measures)}; got {text!r}"
            )
        try:
            floor = float(value)
        except ValueError:
            raise CommandError(f"--fail-under {metric}: {value!r} is not a number") from None
        if not 0 <= floor <= 1:
            raise CommandError(f"--fail-under {metric}: {floor:g} is not between 0 and 1")
        thresholds[metric] = floor
    return thresholds
