"""The copies part: judged abstracts, its measures, one small run on the test database, its report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from django.db import connection

from benchmarks import copies, corpus
from benchmarks.copies_results import CopiesIndex, CopiesResult, section
from mnemosyne.embedding import Embedder

ABSTRACTS = {
    "10": "Vitamin D lowers the risk of fractures in older adults. The effect is larger in women.",
    "11": "Aspirin reduces cardiovascular events. Bleeding risk rises with the dose given daily.",
    "12": "Sleep loss impairs memory consolidation. Naps restore part of the deficit in students.",
}


def scifact(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "qrels" / "train.tsv").write_text(
        "query-id\tcorpus-id\tscore\n1\t10\t1\n2\t10\t1\n3\t11\t1\n4\t99\t1\n5\t12\t1\n"
    )
    queries = {
        "1": "vitamin D fractures",
        "2": "vitamin D women",
        "3": "aspirin bleeding",
        "5": "sleep memory",
    }
    (root / "queries.jsonl").write_text(
        "\n".join(json.dumps({"_id": qid, "text": text}) for qid, text in queries.items()) + "\n"
    )
    (root / "corpus.jsonl").write_text(
        "\n".join(json.dumps({"_id": doc, "title": "", "text": text}) for doc, text in ABSTRACTS.items())
        + "\n"
    )
    return root


def test_judged_abstracts_are_one_per_abstract_in_qrels_order(tmp_path: Path) -> None:
    pairs = corpus.judged_abstracts(scifact(tmp_path), limit=10)
    # Abstract 10's second judgement and the unknown abstract 99 are skipped.
    assert pairs == [
        ("vitamin D fractures", ABSTRACTS["10"]),
        ("aspirin bleeding", ABSTRACTS["11"]),
        ("sleep memory", ABSTRACTS["12"]),
    ]
    assert corpus.judged_abstracts(tmp_path, limit=1) == pairs[:1]


def test_closeness_and_the_exact_nearest_rows() -> None:
    originals = np.eye(3, dtype=np.float32)
    tilted = np.array([0.6, 0.8, 0.0], dtype=np.float32)
    copies_of = np.stack([originals, np.stack([tilted, tilted[[1, 2, 0]], tilted[[2, 0, 1]]])], axis=1)
    to_original, between = copies.closeness(originals, copies_of)
    assert to_original == pytest.approx(0.9)  # median of 1, 0.6, 1, 0, 1, 0.8
    assert between == pytest.approx(0.6)  # median of 0.6, 0, 0.8
    assert copies.nearest(originals, [0.1, 0.9, 0.3], k=2) == {1, 2}


@pytest.mark.slow
@pytest.mark.django_db
def test_a_small_run_measures_both_kinds_of_copies_and_drops_its_table(
    tmp_path: Path, embedder: Embedder
) -> None:
    result = copies.run(
        scifact=scifact(tmp_path), embedder=embedder, originals=3, copies=4, queries=3, log=lambda _: None
    )
    assert (result.originals, result.copies_per_original, result.queries) == (3, 4, 3)
    assert [(index.copies, index.m, index.ef_construction) for index in result.indexes] == [
        ("model", 16, 64),
        ("model", 32, 200),
        ("noise", 16, 64),
        ("noise", 32, 200),
    ]
    # 15 vectors and k 20: every index returns all 15, as the exact scan does.
    assert all(index.recall == {40: 1.0, 100: 1.0, 400: 1.0} for index in result.indexes)
    model_to_original, _ = result.closeness["model"]
    noise_to_original, _ = result.closeness["noise"]
    assert 0.7 < model_to_original < 1.0 and 0.8 < noise_to_original < 1.0
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s)", [copies.TABLE])
        assert cursor.fetchone() == (None,)


def test_the_copies_report_gives_closeness_and_recall_by_build_and_ef_search() -> None:
    result = CopiesResult(
        originals=150, copies_per_original=200, queries=100, recall_k=20, embed_seconds=551.0
    )
    result.closeness = {"model": (0.965, 0.955), "noise": (0.931, 0.866)}
    result.indexes = [
        CopiesIndex("model", 16, 64, 3.0, {40: 0.716, 100: 0.728}),
        CopiesIndex("noise", 32, 200, 14.0, {100: 0.89, 400: 0.952}),
    ]
    markdown = "\n".join(section(result))
    assert "### HNSW recall on near-duplicate copies (150 abstracts × 200 copies, 30,150 vectors)" in markdown
    assert "(embedded in 551 s)" in markdown
    assert "| model | 0.965 | 0.955 |\n| noise | 0.931 | 0.866 |" in markdown
    assert (
        "| copies | m | ef_construction | build s | ef_search 40 | ef_search 100 | ef_search 400 |"
        in markdown
    )
    assert "| model | 16 | 64 | 3.0 | 0.716 | 0.728 | — |" in markdown
    assert "| noise | 32 | 200 | 14.0 | — | 0.890 | 0.952 |" in markdown
