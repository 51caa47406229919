"""The demo's evaluation set (`serve --demo`): made once from the project's own documentation, each
question with the documents that answer it; not made when those documents are not there."""

from __future__ import annotations

import pytest

from mnemosyne.evaluation import demo_set
from mnemosyne.evaluation.models import EvaluationSet, Evidence
from mnemosyne.library.models import Item, LibraryType
from mnemosyne.library.services import ensure_collection, ensure_library

pytestmark = pytest.mark.django_db


def test_the_demo_set_is_made_once_from_the_documents_present() -> None:
    library = ensure_library(name="Mnemosyne docs", library_type=LibraryType.DOCUMENTATION)
    assert demo_set.ensure_demo_set(library) is None
    collection = ensure_collection(library=library, name="docs")
    documents = {ending for _, endings in demo_set.QUESTIONS for ending in endings}
    for ending in sorted(documents):
        Item.objects.create(collection=collection, source=f"/srv/mnemosyne/{ending}", title=ending)

    made = demo_set.ensure_demo_set(library)
    assert made is not None and made.library == library
    assert made.questions.count() == len(demo_set.QUESTIONS)
    logged = made.questions.get(text="How long are tool calls kept in the query log?")
    assert sorted(Evidence.objects.filter(question=logged).values_list("item__title", flat=True)) == [
        "README.md",
        "docs/console.md",
    ]
    assert demo_set.ensure_demo_set(library) == made and EvaluationSet.objects.count() == 1
