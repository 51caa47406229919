"""`manage.py evaluate`: a BEIR-layout dataset loaded once, every judged query scored, JSON last."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from pytest_django.fixtures import Settings

from mnemosyne.evaluation.models import EvaluationSet, Evidence, Run
from mnemosyne.library.models import Chunk, Item, Library
from tests.evaluation.corpus import SCIENCE
from tests.search.rerank_server import RerankServer

# Legs run in threads of their own, on connections of their own: the data must be committed.
pytestmark = pytest.mark.django_db(transaction=True)

CORPUS = SCIENCE
QUERIES = {
    "q1": "why does the moon cause ocean tides",
    "q2": "how do plants make sugar from sunlight",
    "q3": "what comes out of an erupting volcano",
    "q4": "a query nobody judged",
}
# q5 is judged but has no text in queries.jsonl: skipped, as BEIR does.
QRELS = [("q1", "tides", 1), ("q2", "leaves", 1), ("q3", "volcano", 2), ("q5", "bees", 1)]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "tiny"
    (root / "qrels").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w") as corpus:
        for doc_id, (title, text) in CORPUS.items():
            corpus.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    with (root / "queries.jsonl").open("w") as queries:
        for query_id, text in QUERIES.items():
            queries.write(json.dumps({"_id": query_id, "text": text}) + "\n")
    lines = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}\t{s}" for q, d, s in QRELS)]
    (root / "qrels" / "train.tsv").write_text("\n".join(lines) + "\n")
    return root


def evaluate(dataset: Path, *arguments: str) -> dict[str, Any]:
    out = StringIO()
    call_command("evaluate", "--dataset", str(dataset), "--split", "train", *arguments, stdout=out)
    return dict(json.loads(out.getvalue().strip().splitlines()[-1]))


def test_it_scores_every_judged_query_and_prints_json_last(dataset: Path) -> None:
    result = evaluate(dataset)
    assert set(result) == {"ndcg@10", "recall@100", "mrr@10", "queries", "latency_ms"}
    assert result["queries"] == 3
    # Each query's one relevant document is the obvious best match in this corpus.
    assert result["ndcg@10"] == result["recall@100"] == result["mrr@10"] == 1.0
    assert 0 < result["latency_ms"]["p50"] <= result["latency_ms"]["p95"]


def test_the_corpus_is_loaded_once_into_a_library_of_its_own(dataset: Path) -> None:
    evaluate(dataset)
    library = Library.objects.get(name="BEIR tiny")
    items = Item.objects.filter(collection__library=library)
    assert sorted(items.values_list("source", flat=True)) == sorted(CORPUS)
    chunk_ids = set(Chunk.objects.filter(library=library).values_list("id", flat=True))
    again = evaluate(dataset, "--search-types", "fulltext")
    assert again["queries"] == 3
    assert Library.objects.filter(name="BEIR tiny").count() == 1
    assert set(Chunk.objects.filter(library=library).values_list("id", flat=True)) == chunk_ids


def test_each_leg_and_alpha_can_be_measured_alone(dataset: Path) -> None:
    for arguments in (("--search-types", "vector"), ("--search-types", "fulltext"), ("--alpha", "0.3")):
        result = evaluate(dataset, *arguments)
        assert result["queries"] == 3 and result["ndcg@10"] == 1.0, arguments
    graph = evaluate(dataset, "--search-types", "graph")
    assert graph["queries"] == 3 and 0.0 <= graph["ndcg@10"] <= 1.0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("--alpha", "1.5"), "alpha must be between 0 and 1, got 1.5"),
        (("--search-types", "vector,sparse"), "unknown search type 'sparse'"),
        (("--search-types", ","), "search_types must name at least one of"),
        (("--limit", "0"), "limit must be between 1 and 100, got 0"),
    ],
)
def test_bad_arguments_are_refused_before_the_corpus_is_loaded(
    dataset: Path, arguments: tuple[str, ...], message: str
) -> None:
    with pytest.raises(CommandError, match=message):
        evaluate(dataset, *arguments)
    assert not Library.objects.filter(name="BEIR tiny").exists()


def test_fail_under_exits_non_zero_naming_each_measure_below_its_threshold(dataset: Path) -> None:
    # Every measure is 1.0 on this corpus: thresholds it meets pass.
    assert evaluate(dataset, "--fail-under", "ndcg@10=1", "--fail-under", "mrr@10=0.5")["ndcg@10"] == 1.0
    # Judge the tides question by the bees document: it is no longer answered first.
    qrels = dataset / "qrels" / "train.tsv"
    qrels.write_text(qrels.read_text().replace("q1\ttides\t1", "q1\tbees\t1"))
    out = StringIO()
    with pytest.raises(CommandError, match=r"^ndcg@10 0\.\d+ is under 0\.99; mrr@10 0\.\d+ is under 0\.99$"):
        call_command(
            "evaluate",
            *("--dataset", str(dataset), "--split", "train"),
            *(
                "--fail-under",
                "ndcg@10=0.99",
                "--fail-under",
                "mrr@10=0.99",
                "--fail-under",
                "recall@100=0.5",
            ),
            stdout=out,
        )
    # The measures are printed all the same, last.
    printed = json.loads(out.getvalue().strip().splitlines()[-1])
    assert printed["ndcg@10"] < 0.99 and printed["mrr@10"] < 0.99 and printed["recall@100"] == 1.0


@pytest.mark.parametrize(
    ("threshold", "message"),
    [
        ("ndcg=0.7", "METRIC one of ndcg@10, recall@100, mrr@10"),
        ("ndcg@10", "METRIC one of"),
        ("ndcg@10=high", "'high' is not a number"),
        ("ndcg@10=70", "70 is not between 0 and 1"),
    ],
)
def test_a_threshold_that_cannot_be_read_is_refused_before_anything_runs(
    dataset: Path, threshold: str, message: str
) -> None:
    with pytest.raises(CommandError, match=message):
        evaluate(dataset, "--fail-under", threshold)
    assert not Library.objects.filter(name="BEIR tiny").exists()


def test_a_directory_that_is_not_a_beir_dataset_is_refused(dataset: Path) -> None:
    (dataset / "qrels" / "train.tsv").unlink()
    with pytest.raises(CommandError, match=r"not a BEIR dataset: .*train\.tsv is missing"):
        evaluate(dataset)


def test_rerank_without_a_reranker_is_refused(dataset: Path, settings: Settings) -> None:
    settings.RERANK_URL = ""
    settings.RERANK_MODEL_PATH = ""
    with pytest.raises(CommandError, match="--rerank needs a reranker: set RERANK_URL or RERANK_MODEL_PATH"):
        evaluate(dataset, "--rerank")


def test_rerank_sends_each_query_to_the_configured_reranker(
    dataset: Path, settings: Settings, server: RerankServer
) -> None:
    settings.RERANK_URL = f"{server.base}/tei"
    settings.RERANK_MODEL_PATH = ""
    result = evaluate(dataset, "--rerank")
    assert result["queries"] == 3
    assert sorted(request.body["query"] for request in server.requests) == sorted(
        QUERIES[query_id] for query_id in ("q1", "q2", "q3")
    )
    # The fake reranker scores by shared words; each relevant document still shares the most.
    assert result["ndcg@10"] == 1.0


def test_a_failing_reranker_stops_the_evaluation(
    dataset: Path, settings: Settings, server: RerankServer
) -> None:
    settings.RERANK_URL = f"{server.base}/error"
    settings.RERANK_MODEL_PATH = ""
    with pytest.raises(CommandError, match=r"query 'q1': rerank failed \(.*HTTP 500"):
        evaluate(dataset, "--rerank")


def test_a_saved_dataset_run_has_the_same_figures_and_is_kept_with_its_set(dataset: Path) -> None:
    unsaved = evaluate(dataset, "--search-types", "fulltext")
    saved = evaluate(dataset, "--search-types", "fulltext", "--save", "--label", "nightly")
    run = Run.objects.get(uid=saved.pop("run"))
    assert {name: saved[name] for name in ("ndcg@10", "recall@100", "mrr@10", "queries")} == {
        name: unsaved[name] for name in ("ndcg@10", "recall@100", "mrr@10", "queries")
    }
    assert run.label == "nightly" and run.evaluation_set.name == "BEIR tiny train"
    assert run.evaluation_set.questions.count() == 3
    assert run.answers.count() == 3 and run.configuration["search"]["search_types"] == ["fulltext"]
    # Saved again: the same set, a second run.
    evaluate(dataset, "--search-types", "fulltext", "--save")
    assert EvaluationSet.objects.count() == 1 and Run.objects.count() == 2


def set_run(*arguments: str) -> dict[str, Any]:
    out = StringIO()
    call_command("evaluate", *arguments, stdout=out)
    return dict(json.loads(out.getvalue().strip().splitlines()[-1]))


def test_a_set_runs_by_name_and_fails_under_a_threshold(dataset: Path) -> None:
    evaluate(dataset, "--save")
    Run.objects.all().delete()
    measured = set_run("--set", "BEIR tiny train", "--search-types", "fulltext")
    assert measured["success@1"] == measured["ndcg@10"] == 1.0 and measured["questions"] == 3
    assert "run" not in measured and not Run.objects.exists()
    saved = set_run("--set", "BEIR tiny train", "--search-types", "fulltext", "--save")
    assert Run.objects.get().uid == saved["run"]
    with pytest.raises(CommandError, match="no evaluation set named 'Nope'"):
        set_run("--set", "Nope")
    with pytest.raises(CommandError, match="METRIC one of success@1"):
        set_run("--set", "BEIR tiny train", "--fail-under", "recall@100=0.5")
    # Judge a question by another document: the set's success falls under the threshold.
    Evidence.objects.filter(question__origin="q1").update(
        item=Item.objects.get(source="bees", collection__library__name="BEIR tiny")
    )
    with pytest.raises(CommandError, match=r"^success@1 0\.6667 is under 0\.9$"):
        set_run("--set", "BEIR tiny train", "--search-types", "fulltext", "--fail-under", "success@1=0.9")
