"""A synonym change measured as the console measures one: the same evaluation set run before and
after the library gains a set, the two runs compared question by question."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemosyne.embedding import get_embedder
from mnemosyne.evaluation import runs
from mnemosyne.evaluation.comparison import compare
from mnemosyne.evaluation.services import add_answering_chunk, create_set
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.models import Chunk
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.profiles.services import save_synonym_set

pytestmark = pytest.mark.django_db(transaction=True)

NOTES = {
    "kettle.md": "# Kettles\n\nDescale the kettle monthly with citric acid to remove limescale.\n",
    "fridge.md": "# Fridges\n\nDefrost the freezer when the ice is thicker than a centimetre.\n",
    "oven.md": "# Ovens\n\nClean the oven door glass with a paste of baking soda and water.\n",
}


def test_a_synonym_set_shows_its_effect_between_two_runs(tmp_path: Path) -> None:
    for name, text in NOTES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    library = ensure_library(name="Household")
    ingest_paths(
        [tmp_path],
        collection=ensure_collection(library=library, name="notes"),
        report=lambda _: None,
        embedder=get_embedder(),
    )
    questions = create_set(name="Household questions", library=library)
    kettle = Chunk.objects.get(item__title="Kettles")
    add_answering_chunk(
        questions,
        question="How do I get rid of calcium scale in the water boiler?",
        chunk=kettle,
        origin="test",
    )
    keyword_search = runs.RunSettings(search_types=["fulltext"], rerank=False)

    before = runs.execute(runs.start(questions, keyword_search, label="before"))
    save_synonym_set(
        library=library,
        name="appliances",
        text="water boiler, kettle\ncalcium scale, limescale\n",
        actor="test",
    )
    after = runs.execute(runs.start(questions, keyword_search, label="after"))

    comparison = compare(before, after)
    assert (comparison.better, comparison.worse) == (1, 0)
    (change,) = comparison.changed
    assert change.rank_a is None and change.rank_b == 1
