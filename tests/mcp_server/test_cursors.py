"""Paging cursors are opaque, signed and bound to their arguments."""

from __future__ import annotations

import pytest

from mcp_server import cursors

ARGS = {"query": "backups", "limit": 5}


def test_a_cursor_round_trips_its_offset() -> None:
    cursor = cursors.encode("search", offset=15, arguments=ARGS)
    assert (
        not cursor.isdigit() and "backups" not in cursor
    )  # opaque: neither the offset nor the query in clear
    assert cursors.decode("search", cursor, arguments=dict(ARGS)) == 15


@pytest.mark.parametrize(
    "mutate", [lambda c: c[:-1] + ("A" if c[-1] != "A" else "B"), lambda c: "x" + c, str.upper]
)
def test_a_modified_cursor_is_refused(mutate) -> None:
    cursor = cursors.encode("search", offset=15, arguments=ARGS)
    with pytest.raises(cursors.InvalidCursor, match="not valid"):
        cursors.decode("search", mutate(cursor), arguments=ARGS)


def test_a_cursor_for_other_arguments_or_another_listing_is_refused() -> None:
    cursor = cursors.encode("search", offset=15, arguments=ARGS)
    with pytest.raises(cursors.InvalidCursor, match="different query"):
        cursors.decode("search", cursor, arguments={**ARGS, "query": "restores"})
    with pytest.raises(cursors.InvalidCursor, match="not a list_items cursor"):
        cursors.decode("list_items", cursor, arguments=ARGS)


def test_garbage_is_refused() -> None:
    with pytest.raises(cursors.InvalidCursor):
        cursors.decode("search", "not-a-cursor", arguments=ARGS)
