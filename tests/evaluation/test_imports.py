"""Importing an evaluation set: CSV, JSONL and the BEIR layout; every bad row refused with where and
why (unknown items, duplicates, empty questions, formula cells, chunks of another item), the rest
imported; text in another encoding read as such."""

from __future__ import annotations

import json

import pytest

from mnemosyne.evaluation.models import EvaluationSet, Evidence, Question
from mnemosyne.evaluation.services import create_set
from mnemosyne.evaluation.set_imports import import_file
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import Chunk, Item
from tests.evaluation.corpus import make_library

pytestmark = pytest.mark.django_db


@pytest.fixture
def evaluation_set() -> EvaluationSet:
    return create_set(name="Science", library=make_library())


def refused(report: object) -> dict[str, str]:
    return dict(report.refused)  # type: ignore[attr-defined]


def test_a_csv_in_another_encoding_with_bad_rows_imports_the_good_ones(evaluation_set: EvaluationSet) -> None:
    tides = Item.objects.get(source="tides")
    text = (
        "question,item,pages,grade\n"
        "Why do tides rise?,tides,,\n"
        "Où les abeilles portent-elles le pollen ?,bees,,2\n"
        "why do TIDES   rise?,tides,,\n"
        ",volcano,,\n"
        "\"=cmd|' /C calc'!A0\",glacier,,\n"
        "What is in the balance sheet?,report,1,\n"
        "Where is lava from?,no-such-item,,\n"
        f"How do glaciers flow?,{tides.uid},,\n"
        "Bad pages?,report,two,\n"
        "Bad grade?,report,,-1\n"
    )
    report = import_file(evaluation_set, {"set.csv": text.encode("cp1252")})
    assert report.added == 4
    assert refused(report) == {
        "set.csv row 4": "the same question as set.csv row 2",
        "set.csv row 5": "the question is empty",
        "set.csv row 6": (
            "a formula cell (\"=cmd|' /C calc'!A0\"…): a spreadsheet would run it; write it as text"
        ),
        "set.csv row 8": "unknown item 'no-such-item' (no item of this library has that uid or source)",
        "set.csv row 10": "pages must be page numbers like 3, 3;5 or 3-5; got 'two'",
        "set.csv row 11": "grade must be a whole number from 0 to 100; got '-1'",
    }
    assert any("read as" in note for note in report.notes), report.notes
    questions = list(evaluation_set.questions.values_list("text", flat=True))
    assert questions[1] == "Où les abeilles portent-elles le pollen ?"
    assert Evidence.objects.get(question__text="What is in the balance sheet?").pages == [1]
    assert Evidence.objects.get(question__text__startswith="Où").grade == 2
    # Imported again: every row is a duplicate of the set's own.
    again = import_file(evaluation_set, {"set.csv": text.encode("cp1252")})
    assert again.added == 0
    assert refused(again)["set.csv row 2"] == "the question is already in the set"


def test_jsonl_takes_pages_chunks_and_grades(evaluation_set: EvaluationSet) -> None:
    report_item = Item.objects.get(source="report")
    chunk = Chunk.objects.filter(item=report_item).first()
    other = Chunk.objects.filter(item__source="bees").first()
    assert chunk is not None and other is not None
    lines = [
        {
            "question": "Where are the statements?",
            "evidence": [{"item": "report", "pages": [2, 3], "grade": 2}],
        },
        {"question": "Which chunk?", "item": report_item.uid, "chunk": chunk.uid},
        {"question": "A chunk of another item", "item": "report", "chunk": other.uid},
        "not an object",
        {"question": 3, "item": "report"},
        {"question": "No evidence", "evidence": []},
    ]
    body = "\n".join(json.dumps(line) for line in lines) + "\n{broken\n"
    report = import_file(evaluation_set, {"set.jsonl": body.encode()})
    assert report.added == 2
    assert refused(report) == {
        "set.jsonl line 3": f"chunk {other.uid!r} is not a chunk of item 'report'",
        "set.jsonl line 4": "not a JSON object",
        "set.jsonl line 5": '"question" must be text',
        "set.jsonl line 6": "no evidence: name the item (and pages or chunk) that answers it",
        "set.jsonl line 7": "not JSON",
    }
    assert Evidence.objects.get(question__text="Where are the statements?").pages == [2, 3]
    assert Evidence.objects.get(question__text="Which chunk?").chunk_uid == chunk.uid


def test_a_beir_directory_maps_corpus_ids_to_items(evaluation_set: EvaluationSet) -> None:
    queries = "\n".join(
        json.dumps(record)
        for record in (
            {"_id": "q1", "text": "why do tides rise"},
            {"_id": "q2", "text": "how do bees pollinate"},
            {"_id": "q3", "text": "not judged in this split"},
            {"_id": "q4", "text": "judged on a document the library lacks"},
        )
    )
    qrels = (
        "query-id\tcorpus-id\tscore\nq1\ttides\t1\nq2\tbees\t2\nq2\tleaves\t0\nq4\tmissing\t1\nq9\ttides\t1\n"
    )
    report = import_file(
        evaluation_set,
        {"queries.jsonl": queries.encode(), "corpus.jsonl": b"", "train.tsv": qrels.encode()},
        split="train",
    )
    assert report.added == 2
    assert refused(report) == {
        "qrels/train.tsv line 6": "no query 'q9' in queries.jsonl",
        "queries.jsonl line 4": "unknown item 'missing' (no item of this library has that uid or source)",
    }
    assert report.notes == ["1 queries have no relevant judgement in qrels/train.tsv and were left out"]
    # A zero score is not evidence.
    assert list(Evidence.objects.filter(question__origin="q2").values_list("item__source", flat=True)) == [
        "bees"
    ]


def test_files_that_are_no_set_are_refused_whole(evaluation_set: EvaluationSet) -> None:
    with pytest.raises(InvalidArgument, match=r"queries\.jsonl"):
        import_file(evaluation_set, {"notes.txt": b"hello"})
    with pytest.raises(InvalidArgument, match=r"qrels/test\.tsv"):
        import_file(evaluation_set, {"queries.jsonl": b"{}"})
    with pytest.raises(InvalidArgument, match="at least question and item"):
        import_file(evaluation_set, {"set.csv": b"query,doc\nx,y\n"})
    with pytest.raises(InvalidArgument, match="not text"):
        import_file(evaluation_set, {"set.csv": bytes(range(256)) * 4})
    assert not Question.objects.exists()
