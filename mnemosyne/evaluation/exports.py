"""A run's answers as CSV, a row per question, with every text cell a spreadsheet would run as a
formula written as text (a leading apostrophe, as OWASP advises for CSV injection)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from mnemosyne.evaluation.models import Run
from mnemosyne.evaluation.set_imports import is_formula

HEADER = [
    "question",
    "rank",
    "ndcg@10",
    "reciprocal_rank",
    "recall",
    "ms",
    "top_title",
    "top_page",
    "top_chunk",
]


def safe(cell: object) -> object:
    if isinstance(cell, str) and is_formula(cell):
        return "'" + cell
    return cell


def answer_rows(run: Run) -> Iterator[str]:
    """The CSV's lines, streamed: a run of 10,000 questions is not built in memory first."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def line(cells: list[object]) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([safe(cell) for cell in cells])
        return buffer.getvalue()

    yield line(list(HEADER))
    answers = run.answers.select_related("question").order_by("question__position")
    for answer in answers.iterator(chunk_size=1000):
        top = answer.hits[0] if answer.hits else {}
        yield line(
            [
                answer.question.text,
                answer.rank if answer.rank is not None else "",
                round(answer.ndcg_at_10, 4),
                round(answer.reciprocal_rank, 4),
                round(answer.recall, 4),
                round(answer.ms, 1),
                top.get("title", ""),
                top.get("page") or "",
                top.get("chunk_uid", ""),
            ]
        )
