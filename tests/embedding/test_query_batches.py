"""Queries embedded together when they arrive together (embedding/query_batches.py), with a stand-in
model that records its passes: the real model's bit-for-bit identity is tested in test_embedding.py."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from mnemosyne.embedding.query_batches import QueryBatches
from mnemosyne.lib import cancellation


class Model:
    """Each text's vector is its length and first letter; a pass can be held open, and one text fails."""

    def __init__(self) -> None:
        self.passes: list[list[str]] = []
        self.hold = threading.Event()
        self.hold.set()
        self.entered = threading.Event()

    def embed(self, texts: list[str]) -> np.ndarray:
        self.passes.append(list(texts))
        self.entered.set()
        self.hold.wait(5)
        if "poison" in texts:
            raise ValueError("cannot embed poison")
        return np.array([[len(text), ord(text[0])] for text in texts], dtype=np.float32)


def _waiting(batches: QueryBatches, count: int) -> None:
    deadline = time.monotonic() + 5
    while len(batches._waiting) < count:
        assert time.monotonic() < deadline, "the queries never queued"
        time.sleep(0.001)


def test_a_query_that_finds_the_model_idle_runs_at_once_alone() -> None:
    model = Model()
    batches = QueryBatches(model.embed, bound=16)
    assert batches.embed("tides").tolist() == [5.0, ord("t")]
    assert batches.embed("why").tolist() == [3.0, ord("w")]
    assert model.passes == [["tides"], ["why"]]


def test_queries_that_arrive_during_a_pass_go_in_the_next_one_up_to_the_bound() -> None:
    model = Model()
    batches = QueryBatches(model.embed, bound=3)
    model.hold.clear()
    texts = ["first", "b", "cc", "ddd", "eeee", "fffff"]
    with ThreadPoolExecutor(max_workers=6) as pool:
        first = pool.submit(batches.embed, texts[0])
        assert model.entered.wait(5)
        rest = []
        for count, text in enumerate(texts[1:], start=1):
            rest.append(pool.submit(batches.embed, text))
            _waiting(batches, count)
        model.hold.set()
        vectors = [first.result(5), *(future.result(5) for future in rest)]
    assert model.passes == [["first"], ["b", "cc", "ddd"], ["eeee", "fffff"]]
    assert [vector.tolist() for vector in vectors] == [[len(text), ord(text[0])] for text in texts]
    assert not batches._running and not batches._waiting


def test_a_query_that_fails_fails_alone_and_the_others_get_their_vectors() -> None:
    model = Model()
    batches = QueryBatches(model.embed, bound=8)
    model.hold.clear()
    with ThreadPoolExecutor(max_workers=4) as pool:
        first = pool.submit(batches.embed, "first")
        assert model.entered.wait(5)
        others = {text: pool.submit(batches.embed, text) for text in ("good", "poison", "fine")}
        _waiting(batches, 3)
        model.hold.set()
        assert first.result(5).tolist() == [5.0, ord("f")]
        with pytest.raises(ValueError, match="cannot embed poison"):
            others["poison"].result(5)
        assert others["good"].result(5).tolist() == [4.0, ord("g")]
        assert others["fine"].result(5).tolist() == [4.0, ord("f")]
    # The batch failed as a whole, then each of its queries was tried alone.
    assert model.passes[1] == ["good", "poison", "fine"]
    assert sorted(map(tuple, model.passes[2:])) == [("fine",), ("good",), ("poison",)]
    # The model is free again: the next query runs at once.
    assert batches.embed("after").tolist() == [5.0, ord("a")]


def test_a_model_that_returns_too_few_vectors_is_asked_one_query_at_a_time() -> None:
    calls: list[list[str]] = []

    def short(texts: list[str]) -> np.ndarray:
        calls.append(texts)
        return np.zeros((1, 2), dtype=np.float32)

    assert QueryBatches(short, bound=4).embed("x").tolist() == [0.0, 0.0]
    assert calls == [["x"]]


def _under(token: cancellation.Token, batches: QueryBatches, text: str) -> np.ndarray:
    """`text` embedded for a call whose cancellation token is `token`."""
    with cancellation.of(token):
        return batches.embed(text)


def test_a_query_whose_call_is_cancelled_while_it_waits_leaves_the_batch() -> None:
    model = Model()
    batches = QueryBatches(model.embed, bound=8)
    model.hold.clear()
    token = cancellation.Token()

    with ThreadPoolExecutor(max_workers=3) as pool:
        first = pool.submit(batches.embed, "first")
        assert model.entered.wait(5)
        dropped = pool.submit(_under, token, batches, "dropped")
        _waiting(batches, 1)
        kept = pool.submit(batches.embed, "kept")
        _waiting(batches, 2)
        token.cancel()
        # Told at once, while the pass it waited for is still running.
        with pytest.raises(cancellation.Cancelled):
            dropped.result(5)
        assert [query.text for query in batches._waiting] == ["kept"]
        model.hold.set()
        assert first.result(5).tolist() == [5.0, ord("f")]
        assert kept.result(5).tolist() == [4.0, ord("k")]
    assert model.passes == [["first"], ["kept"]], "the cancelled query was never embedded"
    assert not batches._running and not batches._waiting


def test_a_query_already_in_a_pass_when_cancelled_gets_its_vector() -> None:
    model = Model()
    batches = QueryBatches(model.embed, bound=8)
    model.hold.clear()
    token = cancellation.Token()

    with ThreadPoolExecutor(max_workers=1) as pool:
        running = pool.submit(_under, token, batches, "running")
        assert model.entered.wait(5)
        token.cancel()
        model.hold.set()
        assert running.result(5).tolist() == [7.0, ord("r")]
    assert model.passes == [["running"]]
