"""Rows read from a file (set_files.py) checked against the set and its library, and the good ones
added: a row is refused — with where and why — for an empty or over-long question, a formula cell,
a question already in the file or the set, an item the library does not hold (by uid or source),
a chunk that is not that item's, or no evidence at all; the rest are imported."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Max, Q

from mnemosyne.evaluation import set_files
from mnemosyne.evaluation.models import EvaluationSet, Evidence, Question
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import Chunk, Item

MAX_QUESTION_CHARS = 2000
# What a spreadsheet would run as a formula (OWASP's CSV injection list), unless it is a number.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
BATCH = 1000


@dataclass
class ImportReport:
    added: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def import_file(
    evaluation_set: EvaluationSet, files: dict[str, bytes], *, split: str = "test"
) -> ImportReport:
    """Files by name (their base names): queries.jsonl with <split>.tsv (BEIR), one .csv, or one
    .jsonl; InvalidArgument when they are none of these."""
    names = {name.rsplit("/", 1)[-1]: data for name, data in files.items()}
    qrels = f"{split}.tsv"
    if "queries.jsonl" in names:
        if qrels not in names:
            raise InvalidArgument(f"a BEIR directory needs qrels/{qrels} beside queries.jsonl")
        read = set_files.read_beir(
            names["queries.jsonl"], names[qrels], queries_name="queries.jsonl", qrels_name=f"qrels/{qrels}"
        )
    elif len(names) == 1 and next(iter(names)).lower().endswith(".csv"):
        name, data = next(iter(names.items()))
        read = set_files.read_csv(data, name)
    elif len(names) == 1 and next(iter(names)).lower().endswith(".jsonl"):
        name, data = next(iter(names.items()))
        read = set_files.read_jsonl(data, name)
    else:
        raise InvalidArgument(
            "import one .csv, one .jsonl, or a BEIR directory (queries.jsonl and qrels/<split>.tsv)"
        )
    return add_rows(evaluation_set, read)


def add_rows(evaluation_set: EvaluationSet, read: set_files.Read) -> ImportReport:
    report = ImportReport(refused=list(read.refused), notes=list(read.notes))
    items = _items(evaluation_set, {ref.item for row in read.rows for ref in row.evidence})
    chunks = _chunks({ref.chunk for row in read.rows for ref in row.evidence if ref.chunk})
    existing = {_key(text) for text in evaluation_set.questions.values_list("text", flat=True)}
    first_seen: dict[str, str] = {}
    accepted: list[tuple[set_files.Row, list[Evidence]]] = []
    for row in read.rows:
        problem = _problem(row, existing, first_seen)
        evidence: list[Evidence] = []
        if problem is None:
            for ref in row.evidence:
                if not ref.item:
                    problem = "no item named: give an item's uid or source"
                    break
                found = items[ref.item]
                if isinstance(found, str):
                    problem = found
                    break
                if ref.chunk and chunks.get(ref.chunk) != found.pk:
                    problem = f"chunk {ref.chunk!r} is not a chunk of item {ref.item!r}"
                    break
                if ref.grade > 0:
                    evidence.append(
                        Evidence(item=found, pages=list(ref.pages), chunk_uid=ref.chunk, grade=ref.grade)
                    )
            if problem is None and not evidence:
                problem = "no evidence: name the item (and pages or chunk) that answers it"
        if problem is not None:
            report.refused.append((row.where, problem))
            continue
        first_seen[_key(row.question)] = row.where
        accepted.append((row, evidence))
    with transaction.atomic():
        position = (evaluation_set.questions.aggregate(last=Max("position"))["last"] or 0) + 1
        for start in range(0, len(accepted), BATCH):
            batch = accepted[start : start + BATCH]
            questions = Question.objects.bulk_create(
                [
                    Question(
                        evaluation_set=evaluation_set,
                        text=question_text(row.question),
                        origin=row.origin[:200],
                        position=position + offset,
                    )
                    for offset, (row, _) in enumerate(batch)
                ]
            )
            position += len(batch)
            pieces = []
            for question, (_, evidence) in zip(questions, batch, strict=True):
                for piece in evidence:
                    piece.question = question
                    pieces.append(piece)
            Evidence.objects.bulk_create(pieces)
    report.added = len(accepted)
    return report


def is_formula(text: str) -> bool:
    """Whether a spreadsheet would run the cell as a formula: it starts with one of
    FORMULA_STARTS and is not a plain number (-3, +1.5)."""
    if not text.startswith(FORMULA_STARTS):
        return False
    try:
        float(text)
    except ValueError:
        return True
    return False


def question_text(text: str) -> str:
    """A question as a set keeps it: its whitespace collapsed."""
    return " ".join(text.split())


def question_problem(question: str) -> str | None:
    """Why a question (as question_text gives it) cannot be kept: empty, or too long."""
    if not question:
        return "the question is empty"
    if len(question) > MAX_QUESTION_CHARS:
        return f"the question is longer than {MAX_QUESTION_CHARS:,} characters"
    return None


def _problem(row: set_files.Row, existing: set[str], first_seen: dict[str, str]) -> str | None:
    question = question_text(row.question)
    problem = question_problem(question)
    if problem is not None:
        return problem
    formula = next((cell for cell in [row.question, *row.cells] if is_formula(cell.strip())), None)
    if formula is not None:
        return f"a formula cell ({formula.strip()[:20]!r}…): a spreadsheet would run it; write it as text"
    key = _key(question)
    if key in existing:
        return "the question is already in the set"
    if key in first_seen:
        return f"the same question as {first_seen[key]}"
    return None


def _key(text: str) -> str:
    return question_text(text).casefold()


def _items(evaluation_set: EvaluationSet, refs: set[str]) -> dict[str, Item | str]:
    """Each reference: the library's item with that uid, else that source; else why not (text)."""
    found: dict[str, Item | str] = {
        ref: f"unknown item {ref!r} (no item of this library has that uid or source)" for ref in refs
    }
    by_source: dict[str, list[Item]] = defaultdict(list)
    matching = Item.objects.filter(collection__library=evaluation_set.library).filter(
        Q(uid__in=refs) | Q(source__in=refs)
    )
    for item in matching.only("id", "uid", "source"):
        if item.uid in refs:
            found[item.uid] = item
        if item.source in refs:
            by_source[item.source].append(item)
    for source, items in by_source.items():
        if isinstance(found.get(source), Item):
            continue
        found[source] = (
            items[0]
            if len(items) == 1
            else f"{len(items)} items have the source {source!r}: name one by its uid"
        )
    return found


def _chunks(uids: set[str]) -> dict[str, int]:
    """Chunk uid -> its item's id."""
    return dict(Chunk.objects.filter(uid__in=uids).values_list("uid", "item_id")) if uids else {}
