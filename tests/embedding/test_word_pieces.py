"""The model's tokenizer on `tokenizers` alone gives exactly what the `transformers` tokenizer
gives: the same ids, masks and type ids for a padded, truncated batch, the same word-piece counts
and offsets for the chunker."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
import tokenizers
from tokenizers import Tokenizer

from mnemosyne.embedding.word_pieces import WordPieces

pytestmark = pytest.mark.slow

TEXTS = [
    "How do I restore the database from last night's dump?",
    "glacier",
    "",
    "Ünïcode, 漢字 and emoji 🙂 in one passage — with “quotes”, ﬁ ligatures and\ttabs\nand lines",
    "word " * 400,  # beyond the model's window
    "SELECT * FROM library_chunk WHERE id = 42; -- code, URLs https://example.org/a?b=c#d",
    "Net revenue was $12,345 million (2023: $(1,234)), up 3.5% year over year.",
]
INPUTS = ["input_ids", "attention_mask", "token_type_ids"]


def test_a_batch_is_tokenized_as_the_model_tokenizes_it(torch_model: Any) -> None:
    pieces = WordPieces.of(torch_model.tokenizer, max_length=256)
    for batch in (TEXTS, TEXTS[:2], [TEXTS[4]], TEXTS[::-1]):
        expected = torch_model.tokenizer(
            batch, padding=True, truncation=True, max_length=256, return_tensors="np"
        )
        got = pieces.batch(batch, INPUTS)
        for name in INPUTS:
            assert np.array_equal(got[name], expected[name].astype(np.int64)), name


def test_word_pieces_are_counted_and_placed_as_the_model_counts_them(torch_model: Any) -> None:
    pieces = WordPieces.of(torch_model.tokenizer, max_length=256)
    for text in TEXTS:
        assert pieces.count(text) == len(torch_model.tokenizer.tokenize(text))
        offsets = torch_model.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        assert pieces.starts(text) == [start for start, _ in offsets["offset_mapping"]]


def test_the_settings_make_the_same_tokenizer_again(torch_model: Any) -> None:
    pieces = WordPieces.of(torch_model.tokenizer, max_length=256)
    again = WordPieces(**pieces.settings())
    for name, column in again.batch(TEXTS, INPUTS).items():
        assert np.array_equal(column, pieces.batch(TEXTS, INPUTS)[name])
    assert again.max_length == 256


def test_tokenizers_outlive_the_threads_that_used_them(
    torch_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each batch takes a tokenizer of its own; one built is reused by later threads, not rebuilt."""
    pieces = WordPieces.of(torch_model.tokenizer, max_length=256)
    built: list[str] = []

    class Counted:
        """tokenizers.Tokenizer, its builds from JSON counted."""

        @staticmethod
        def from_str(json: str) -> tokenizers.Tokenizer:
            built.append(json)
            return Tokenizer.from_str(json)

    monkeypatch.setattr(tokenizers, "Tokenizer", Counted)
    expected = pieces.batch(TEXTS, INPUTS)
    assert len(built) == 1
    for _ in range(5):  # threads that come and go one after another, as a server's workers do
        thread = threading.Thread(target=pieces.batch, args=(TEXTS, INPUTS))
        thread.start()
        thread.join()
    assert len(built) == 1
    start = threading.Barrier(8)

    def together() -> dict[str, np.ndarray]:
        start.wait()
        return pieces.batch(TEXTS, INPUTS)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: together(), range(8)))
    for got in results:
        for name in INPUTS:
            assert np.array_equal(got[name], expected[name]), name
    assert 1 <= len(built) <= 8
