"""The chunk inspector's text: chunks as consecutive pieces of their item's text, overlaps and gaps
told apart. Pure (chunks built in memory, their texts given)."""

from __future__ import annotations

from typing import Any

import pytest

from console import item_text
from mnemosyne.library.models import Chunk

TEXT = "Alpha beta gamma delta. " * 10  # 240 characters


def chunk(start: int, end: int, text: str | None = None) -> Chunk:
    return Chunk(char_start=start, char_end=end, text_preview=TEXT[start:end] if text is None else text)


@pytest.fixture(autouse=True)
def _texts_from_previews(monkeypatch: Any) -> None:
    monkeypatch.setattr(item_text, "chunk_text", lambda found: found.text_preview)


def test_overlaps_are_marked_and_each_chunk_keeps_its_own_text() -> None:
    first, second = item_text.pieces([chunk(0, 120), chunk(100, 240)])
    assert (first.gap, first.overlap, first.text) == (0, "", TEXT[:120])
    assert (second.gap, second.overlap, second.text) == (0, TEXT[100:120], TEXT[120:240])
    assert first.text + second.text == TEXT  # nothing lost, nothing twice


def test_text_in_no_chunk_is_a_gap_but_a_separator_is_not() -> None:
    pieces = item_text.pieces([chunk(0, 100), chunk(102, 150), chunk(200, 240)])
    assert [piece.gap for piece in pieces] == [0, 0, 50]


def test_a_chunk_whose_text_is_not_its_span_is_shown_whole() -> None:
    # A table's later part carries its header again: its text is not a slice of the item's.
    header = "| year | sales |\n|---|---|\n"
    pieces = item_text.pieces([chunk(0, 120), chunk(100, 200, header + TEXT[100:200])])
    assert pieces[1].overlap == "" and pieces[1].text.startswith(header)
