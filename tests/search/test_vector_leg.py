"""The vector leg's HNSW settings: once per database session, or per transaction inside one."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from pytest_django.fixtures import Settings

from mnemosyne.search import legs

UNIT = [1.0] + [0.0] * 383


def session_setting(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting(%s, true)", [name])
        (value,) = cursor.fetchone() or ("",)
    return str(value)


@pytest.mark.django_db(transaction=True)
def test_the_session_keeps_the_settings_and_follows_a_change(settings: Settings) -> None:
    settings.SEARCH_HNSW_EF_SEARCH = 77
    legs.vector_leg(UNIT, legs.Filters(), 5)
    assert session_setting("hnsw.ef_search") == "77"
    assert session_setting("hnsw.iterative_scan") == "relaxed_order"

    settings.SEARCH_HNSW_EF_SEARCH = 123
    legs.vector_leg(UNIT, legs.Filters(), 5)
    assert session_setting("hnsw.ef_search") == "123"

    # A new connection is a new session: it is set again.
    connection.close()
    legs.vector_leg(UNIT, legs.Filters(), 5)
    assert session_setting("hnsw.ef_search") == "123"


@pytest.mark.django_db(transaction=True)
def test_inside_a_transaction_the_settings_end_with_it(settings: Settings) -> None:
    connection.close()
    settings.SEARCH_HNSW_EF_SEARCH = 55
    with transaction.atomic():
        legs.vector_leg(UNIT, legs.Filters(), 5)
        assert session_setting("hnsw.ef_search") == "55"
    assert session_setting("hnsw.ef_search") in ("", "40")  # unset, or pgvector's default
    # Outside the transaction the leg sets them for the session again.
    legs.vector_leg(UNIT, legs.Filters(), 5)
    assert session_setting("hnsw.ef_search") == "55"
