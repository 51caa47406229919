"""python manage.py evaluate --dataset DIR [--split S] [--search-types T,T] [--alpha A] [--rerank] [--limit N]
[--fail-under METRIC=VALUE ...]

Loads a BEIR-layout dataset into a library of its own (once), runs every judged
query of the split through the SearchService, and prints as its last line a JSON
object with ndcg@10, recall@100, mrr@10, queries and latency_ms {p50, p95}. With
--fail-under (for a team's CI) it then exits non-zero, naming each measure that fell
below its threshold.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from mnemosyne.embedding import get_embedder
from mnemosyne.evaluation.beir import Dataset, ensure_loaded, evaluate
from mnemosyne.library.errors import LibraryError
from mnemosyne.management.schema import require_current_schema
from mnemosyne.search.rerankers import get_reranker
from mnemosyne.search.service import SEARCH_TYPES, SearchRequest, validate
from mnemosyne.storage import get_chunk_store


class Command(BaseCommand):
    help = "Measure search quality on a BEIR-layout dataset."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True, type=Path, help="Directory with corpus.jsonl etc.")
        parser.add_argument("--split", default="test", choices=["train", "dev", "test"])
        parser.add_argument(
            "--search-types",
            default="vector,fulltext",
            help=f"Comma-separated legs to run: some of {', '.join(SEARCH_TYPES)}.",
        )
        parser.add_argument("--limit", type=int, default=100, help="Results per query (1-100).")
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
            help=f"Exit non-zero when METRIC ({', '.join(MEASURES)}) is below VALUE, e.g. ndcg@10=0.70; "
            "repeat for several.",
        )
        parser.add_argument(
            "--rerank",
            action="store_true",
            help="Rerank each query's fused head with the configured reranker (RERANK_URL or "
            "RERANK_MODEL_PATH, RERANK_TOP_N results); without one the command refuses to run.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        require_current_schema()
        thresholds = parse_thresholds(options["fail_under"])
        dataset = Dataset(options["dataset"])
        if options["rerank"] and get_reranker() is None:
            raise CommandError("--rerank needs a reranker: set RERANK_URL or RERANK_MODEL_PATH")
        progress = sys.stderr.isatty()
        try:
            dataset.check(options["split"])
            # Arguments are checked before the corpus is loaded, which can take minutes.
            template = SearchRequest(
                query="?",
                limit=options["limit"],
                search_types=[name.strip() for name in options["search_types"].split(",") if name.strip()],
                rerank=options["rerank"],
                alpha=options["alpha"],
            )
            validate(template)
            embedder = get_embedder()
            with tqdm(total=dataset.corpus_size(), unit="doc", desc="load", disable=not progress) as bar:
                library, _ = ensure_loaded(
                    dataset,
                    embedder=embedder,
                    store=get_chunk_store(),
                    on_progress=lambda result: bar.update(1),
                )
            template = replace(template, library_uid=library.uid)
            with tqdm(unit="query", desc="search", disable=not progress) as bar:

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
        except LibraryError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(result.as_json())
        measured = json.loads(result.as_json())
        below = [
            f"{metric} {measured[metric]} is under {floor}"
            for metric, floor in thresholds.items()
            if measured[metric] < floor
        ]
        if below:
            raise CommandError("; ".join(below))


# The measures a threshold may name: those the last line reports.
MEASURES = ("ndcg@10", "recall@100", "mrr@10")


def parse_thresholds(given: list[str]) -> dict[str, float]:
    """METRIC=VALUE pairs; CommandError, naming the one at fault, before anything runs."""
    thresholds: dict[str, float] = {}
    for text in given:
        metric, sep, value = (part.strip() for part in text.partition("="))
        if not sep or metric not in MEASURES:
            raise CommandError(
                f"--fail-under takes METRIC=VALUE with METRIC one of {', '.join(MEASURES)}; got {text!r}"
            )
        try:
            floor = float(value)
        except ValueError:
            raise CommandError(f"--fail-under {metric}: {value!r} is not a number") from None
        if not 0 <= floor <= 1:
            raise CommandError(f"--fail-under {metric}: {floor:g} is not between 0 and 1")
        thresholds[metric] = floor
    return thresholds
