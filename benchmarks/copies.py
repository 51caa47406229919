"""HNSW recall on near-duplicate copies: why the million part's recall is low, and whether its copies
are to blame.

The million part grows its index with ≈ 200 copies of each real chunk, a perturbed text and the
original's vector with Gaussian noise. Here, on a small set of judged abstracts with as many copies
each, the same recall is measured twice: with the noise vectors, and with the model's own vectors of
the copies' texts (what ingesting them would write) — at the HNSW parameters the project builds with
and at larger ones. A plain table of its own in the benchmark's database; dropped afterwards.
"""

from __future__ import annotations

import contextlib
import random
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
from django.db import connection

from benchmarks import corpus
from benchmarks.copies_results import CopiesIndex, CopiesResult
from mnemosyne.embedding import Embedder
from mnemosyne.library import vector_models

RECALL_K = 20
# (m, ef_construction): the project's own, then a denser graph.
BUILDS = ((vector_models.HNSW_M, vector_models.HNSW_EF_CONSTRUCTION), (32, 200))
EF_SEARCH = (40, 100, 400)
TABLE = "benchmark_copies_vectors"
SEED = 7

Log = Callable[[str], None]


def run(
    *, scifact: Path, embedder: Embedder, originals: int, copies: int, queries: int, log: Log
) -> CopiesResult:
    pairs = corpus.judged_abstracts(scifact, originals)
    result = CopiesResult(
        originals=len(pairs), copies_per_original=copies, queries=min(queries, len(pairs)), recall_k=RECALL_K
    )
    abstracts = [abstract for _, abstract in pairs]
    original_vectors = np.asarray(embedder.embed_batch(abstracts), dtype=np.float32)
    log(f"embedding {len(abstracts) * copies:,} perturbed copies of {len(abstracts)} abstracts")
    text_rng = random.Random(SEED)
    texts = [corpus.perturb_text(abstract, text_rng) for abstract in abstracts for _ in range(copies)]
    started = time.perf_counter()
    model_copies = np.asarray(embedder.embed_batch(texts), dtype=np.float32)
    result.embed_seconds = time.perf_counter() - started
    vector_rng = np.random.default_rng(SEED)
    noise_copies = np.asarray(
        [corpus.perturb_vector(vector, vector_rng) for vector in original_vectors for _ in range(copies)],
        dtype=np.float32,
    )
    query_vectors = [embedder.embed_query(query) for query, _ in pairs[: result.queries]]
    for kind, copied in (("model", model_copies), ("noise", noise_copies)):
        result.closeness[kind] = closeness(original_vectors, copied.reshape(len(abstracts), copies, -1))
        vectors = np.vstack([original_vectors, copied])
        exact = [nearest(vectors, query, RECALL_K) for query in query_vectors]
        with _table(vectors):
            for m, ef_construction in BUILDS:
                index = _measure(kind, m, ef_construction, query_vectors, exact)
                result.indexes.append(index)
                log(
                    f"  {kind} copies, m {m}, ef_construction {ef_construction}: recall@{RECALL_K} "
                    + ", ".join(f"{recall:.3f} at ef_search {ef}" for ef, recall in index.recall.items())
                )
    return result


def closeness(originals: np.ndarray, copies: np.ndarray) -> tuple[float, float]:
    """Median cosine of a copy to its original, and of an original's first two copies (unit vectors;
    `copies` has the shape (originals, copies, dimensions))."""
    to_original = np.einsum("od,ocd->oc", originals, copies)
    between = np.einsum("od,od->o", copies[:, 0], copies[:, 1])
    return float(np.median(to_original)), float(np.median(between))


def nearest(vectors: np.ndarray, query: Sequence[float], k: int) -> set[int]:
    """The rows of the k unit vectors nearest the query by cosine (an exact scan)."""
    similarities = vectors @ np.asarray(query, dtype=np.float32)
    return {int(row) for row in np.argsort(-similarities, kind="stable")[:k]}


def _measure(
    kind: str, m: int, ef_construction: int, queries: Sequence[Sequence[float]], exact: Sequence[set[int]]
) -> CopiesIndex:
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {TABLE}_hnsw")
        started = time.perf_counter()
        cursor.execute(
            f"CREATE INDEX {TABLE}_hnsw ON {TABLE} USING hnsw (embedding vector_cosine_ops) "
            f"WITH (m = {m}, ef_construction = {ef_construction})"
        )
        index = CopiesIndex(kind, m, ef_construction, time.perf_counter() - started)
        for ef_search in EF_SEARCH:
            cursor.execute("SELECT set_config('hnsw.ef_search', %s, false)", [str(ef_search)])
            shares = []
            for query, expected in zip(queries, exact, strict=True):
                cursor.execute(
                    f"SELECT id FROM {TABLE} ORDER BY embedding <=> %s::vector LIMIT %s",
                    [vector_models.vector_text(query), RECALL_K],
                )
                shares.append(len({row[0] for row in cursor.fetchall()} & expected) / len(expected))
            index.recall[ef_search] = statistics.fmean(shares)
        cursor.execute("RESET hnsw.ef_search")
    return index


@contextlib.contextmanager
def _table(vectors: np.ndarray) -> Iterator[None]:
    """The vectors in a table of their own (row number as id) for as long as the block runs."""
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
        cursor.execute(f"CREATE TABLE {TABLE} (id integer PRIMARY KEY, embedding vector({vectors.shape[1]}))")
        with cursor.cursor.copy(f"COPY {TABLE} (id, embedding) FROM STDIN") as copy:
            for row, vector in enumerate(vectors):
                copy.write_row([row, vector_models.vector_text(vector)])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
