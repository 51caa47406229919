"""Writes to evaluation sets other than imports (set_imports.py) and runs (runs.py): a new set, and
a question answered by a hit — the playground's "this hit answers the question"."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.db import IntegrityError, transaction
from django.db.models import Max

from mnemosyne.evaluation.models import EvaluationSet, Evidence, Question
from mnemosyne.evaluation.set_imports import is_formula, question_problem, question_text
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import Chunk, Library

MAX_NAME_CHARS = 200


def create_set(
    *, name: str, library: Library, description: str = "", user: User | AnonymousUser | None = None
) -> EvaluationSet:
    name = " ".join(name.split())
    if not name:
        raise InvalidArgument("a set needs a name")
    if len(name) > MAX_NAME_CHARS:
        raise InvalidArgument(f"a set's name is at most {MAX_NAME_CHARS} characters")
    if EvaluationSet.objects.filter(name=name).exists():
        raise InvalidArgument(f"there is already a set named {name!r}")
    try:
        with transaction.atomic():
            return EvaluationSet.objects.create(
                name=name,
                library=library,
                description=description.strip(),
                created_by=user if isinstance(user, User) else None,
            )
    except IntegrityError:
        raise InvalidArgument(f"there is already a set named {name!r}") from None


def add_answering_chunk(
    evaluation_set: EvaluationSet, *, question: str, chunk: Chunk, origin: str
) -> Question:
    """The question (added when new) answered by this chunk: its item's page when it has pages, the
    chunk itself when not. InvalidArgument when the chunk is not of the set's library."""
    text = question_text(question)
    problem = question_problem(text)
    if problem is not None:
        raise InvalidArgument(problem)
    if is_formula(text):
        raise InvalidArgument("the question starts like a spreadsheet formula; write it as text")
    if chunk.item.collection.library_id != evaluation_set.library_id:
        raise InvalidArgument(f"that passage is not in the set's library ({evaluation_set.library.name})")
    with transaction.atomic():
        found = evaluation_set.questions.filter(text__iexact=text).first()
        if found is None:
            last = evaluation_set.questions.aggregate(last=Max("position"))["last"] or 0
            found = Question.objects.create(
                evaluation_set=evaluation_set, text=text, origin=origin, position=last + 1
            )
        pages = list(range(chunk.page, (chunk.page_end or chunk.page) + 1)) if chunk.page is not None else []
        evidence = Evidence(
            question=found, item=chunk.item, pages=pages, chunk_uid="" if pages else chunk.uid
        )
        duplicate = Evidence.objects.filter(
            question=found, item=chunk.item, pages=evidence.pages, chunk_uid=evidence.chunk_uid
        ).exists()
        if not duplicate:
            evidence.save()
    return found
