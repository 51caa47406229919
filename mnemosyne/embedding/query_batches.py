"""Queries that arrive together are embedded together: one forward pass for the queries waiting
while the previous pass ran (group commit), up to EMBEDDING_QUERY_BATCH of them.

Nothing waits for company: a query that finds the model idle runs at once, alone, as it would
without batching, so one client's searches are as fast as before. Under load, queries queue while a
pass runs and the next pass takes them all. The encoder runs a batch in passes over queries of like
length (query_encoder.like_lengths: the graph computes every padded position), each padded to its
longest query and each row pooled under its own attention mask, so every query's vector is the one
it gets alone, bit for bit (tests/embedding/test_embedding.py compares the bytes; 809 of 809
SciFact queries in random batches of 2-16 came out the same, docs/benchmarks.md).

A pass that fails is tried again one query at a time, so only the query that cannot be embedded
fails (with its own error); the others get their vectors. A query whose call is cancelled while it
waits for a pass leaves the queue (lib/cancellation.py): the next pass does not embed it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from mnemosyne.lib import cancellation
from mnemosyne.lib.metrics import QUERY_BATCH_SIZE


@dataclass(eq=False)
class _Query:
    text: str
    # Set when the query has its vector or its error, or when it is to run the next pass.
    ready: threading.Event = field(default_factory=threading.Event)
    vector: np.ndarray | None = None
    error: BaseException | None = None
    leads: bool = False


class QueryBatches:
    def __init__(self, embed: Callable[[list[str]], np.ndarray], *, bound: int) -> None:
        self._embed = embed
        self._bound = max(1, bound)
        self._lock = threading.Lock()
        # Queries not yet in a pass, oldest first; never empty while a pass runs and others wait.
        self._waiting: list[_Query] = []
        self._running = False

    def embed(self, text: str) -> np.ndarray:
        query = _Query(text)
        with self._lock:
            self._waiting.append(query)
            if not self._running:
                self._running = query.leads = True
        if not query.leads:
            token = cancellation.current()
            forget = token.on_cancel(lambda: self._withdraw(query)) if token is not None else None
            query.ready.wait()
            if forget is not None:
                forget()
        if query.leads:
            self._pass()
        if query.error is not None:
            raise query.error
        assert query.vector is not None
        return query.vector

    def _pass(self) -> None:
        """Run the waiting queries (this thread's first among them), then hand the model on."""
        with self._lock:
            batch, self._waiting = self._waiting[: self._bound], self._waiting[self._bound :]
        try:
            QUERY_BATCH_SIZE.observe(len(batch))
            try:
                vectors: list[np.ndarray | None] = list(self._embed([query.text for query in batch]))
            except Exception:
                vectors = []
            if len(vectors) != len(batch):
                vectors = [self._alone(query) for query in batch]
            for query, vector in zip(batch, vectors, strict=True):
                query.vector = vector
        finally:
            for query in batch:
                if query.vector is None and query.error is None:
                    query.error = RuntimeError("the query was not embedded")
                query.leads = False
                query.ready.set()
            with self._lock:
                if self._waiting:
                    following = self._waiting[0]
                    following.leads = True
                    following.ready.set()
                else:
                    self._running = False

    def _withdraw(self, query: _Query) -> None:
        """A cancelled query still in the queue leaves it (one already in a pass, or about to lead
        the next, goes on: its thread is already running the model)."""
        with self._lock:
            if query.leads or not any(waiting is query for waiting in self._waiting):
                return
            self._waiting = [waiting for waiting in self._waiting if waiting is not query]
        query.error = cancellation.Cancelled()
        query.ready.set()

    def _alone(self, query: _Query) -> np.ndarray | None:
        try:
            return np.asarray(self._embed([query.text])[0])
        except Exception as exc:
            query.error = exc
            return None
