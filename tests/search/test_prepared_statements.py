"""The statements every search runs are prepared once per connection, and answer as unprepared ones do."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from pytest_django.fixtures import Settings

from mnemosyne.library import selectors
from mnemosyne.search import legs
from mnemosyne.search.filters import Filters
from mnemosyne.search.units import Located
from tests.search.test_bm25 import TEXTS, add_chunks

pytestmark = pytest.mark.django_db

QUESTIONS = [
    "glacier meltwater lake",
    "ice cores climate",
    '"valley floor" -winter',
    "lake OR spring",
    "spring",
    "climate warms",
    "thousand years",
]


def prepared(pattern: str) -> list[tuple[int, int]]:
    """This connection's prepared statements whose text holds `pattern`: (generic plans, custom plans)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE strpos(statement, %s) > 0",
            [pattern],
        )
        return cursor.fetchall()


def answers(filters: list[Filters], ids: list[int], uid: str) -> list[Any]:
    found: list[Any] = []
    for each in filters:
        for question in QUESTIONS:
            located: dict[int, Located] = {}
            found.append((legs.fulltext_leg(question, each, 3, located=located), located))
    found.append({chunk_id: chunk.text_preview for chunk_id, chunk in legs.hydrate(ids).items()})
    found.append(legs.locate(ids))
    library, identified = selectors.library_to_search(uid)
    found.append((library.pk, identified))
    found.append(selectors.library_traits(None))
    found.append(selectors.library_traits([library.pk]))
    return found


def test_prepared_and_unprepared_statements_answer_the_same(settings: Settings) -> None:
    chunks = add_chunks(TEXTS)
    other = add_chunks(["The glacier's lake froze early this year."], library="Other")
    library_id, collection_id = chunks[0].library_id, chunks[0].collection_id
    filters = [
        Filters(library_id=library_id),
        Filters(library_ids=[library_id, other[0].library_id]),
        Filters(library_id=library_id, collection_id=collection_id, include_images=False),
        Filters(library_id=library_id, item_ids=[chunks[0].item_id]),
    ]
    ids = [chunk.pk for chunk in chunks]
    uid = chunks[0].library.uid

    settings.DATABASE_PREPARED_STATEMENTS = False
    unprepared = answers(filters, ids, uid)
    assert prepared("library_posting") == []

    settings.DATABASE_PREPARED_STATEMENTS = True
    first = answers(filters, ids, uid)
    again = answers(filters, ids, uid)
    assert first == unprepared
    assert again == unprepared
    assert unprepared[0][0], "the first question matches chunks"

    # Each statement prepared once for this connection and run from then on (plans counted).
    full_text = prepared("library_posting")
    assert full_text and all(generic + custom >= 2 for generic, custom in full_text)
    (hydration,) = prepared("c.text_preview AS c_text_preview")
    assert sum(hydration) == 2
    assert sum(sum(plans) for plans in prepared("FROM library_library l WHERE l.uid")) == 2
    assert sum(sum(plans) for plans in prepared("l.library_type,")) == 4  # every library, then one


def test_a_plan_kept_for_one_library_answers_for_another(settings: Settings) -> None:
    """After five runs PostgreSQL may keep one generic plan for the statement (here it must, for the
    test's transaction): each run's values still decide what it reads."""
    settings.DATABASE_PREPARED_STATEMENTS = True
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
    mine = add_chunks(TEXTS)
    theirs = add_chunks(["A glacier calved into the fjord."], library="Theirs")
    for _ in range(8):
        found = legs.fulltext_leg("glacier", Filters(library_id=mine[0].library_id), 5)
        assert {chunk_id for chunk_id, _ in found} == {mine[0].pk, mine[1].pk}
    assert [
        chunk_id for chunk_id, _ in legs.fulltext_leg("glacier", Filters(library_id=theirs[0].library_id), 5)
    ] == [theirs[0].pk]
    assert prepared("library_posting") == [(9, 0)]
