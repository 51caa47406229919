"""Tuning internals: how hard the engine works for a result — postings read per query term, the
HNSW search's width, BM25's constants, threads, retries. Their defaults were measured
(docs/benchmarks.md), and they are set together in one variable, `TUNING`
(`TUNING=hnsw_ef_search=1000,bm25_rescore=400`), rather than one variable each. Each becomes the
Django setting named beside it, which the code reads.

`python -m mnemosyne.project.tuning` prints the README's tuning table from KNOBS
(tests/test_settings_documented.py fails when the two differ). A variable of one of the names
these replaced, still set, is refused at start with the key to use instead: never silently ignored.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured

from mnemosyne.project.env import envstr

VARIABLE = "TUNING"


@dataclass(frozen=True)
class Knob:
    setting: str
    default: int | float
    minimum: int | float
    maximum: int | float
    meaning: str


KNOBS: dict[str, Knob] = {
    "hnsw_ef_search": Knob(
        "SEARCH_HNSW_EF_SEARCH",
        100,
        1,
        1000,
        "`hnsw.ef_search` of the vector leg: higher is more exact and slower. Raise it for a corpus of"
        " many near-copies (or rebuild the index denser, `manage.py rebuild_vector_index`).",
    ),
    "rrf_k": Knob("SEARCH_RRF_K", 60, 1, 1000, "The k of reciprocal rank fusion (`SEARCH_FUSION=rrf`)."),
    "graph_hops": Knob(
        "SEARCH_GRAPH_HOPS",
        1,
        1,
        2,
        "How far the graph leg expands a query's concepts through co-occurrence edges.",
    ),
    "bm25_k1": Knob("SEARCH_BM25_K1", 0.9, 0.0, 10.0, "BM25 term-frequency saturation of the full-text leg."),
    "bm25_b": Knob("SEARCH_BM25_B", 0.4, 0.0, 1.0, "BM25 length normalisation of the full-text leg."),
    "bm25_term_postings": Knob(
        "SEARCH_BM25_TERM_POSTINGS",
        1000,
        10,
        10_000_000,
        "Postings read per query term, strongest first: bounds the full-text leg's cost at any corpus size.",
    ),
    "bm25_rescore": Knob(
        "SEARCH_BM25_RESCORE",
        200,
        1,
        100_000,
        "Best candidates of those, scored exactly over all their terms' postings.",
    ),
    "bm25_max_query_terms": Knob(
        "SEARCH_BM25_MAX_QUERY_TERMS",
        32,
        1,
        1024,
        "Query terms the full-text leg scores, rarest first: a long text pasted as a query costs what "
        "a sentence does.",
    ),
    "query_threads": Knob(
        "EMBEDDING_QUERY_THREADS",
        1,
        1,
        64,
        "ONNX Runtime threads per query embedding: one is fastest while the full-text leg runs beside it"
        " on 2 cores.",
    ),
    "query_batch": Knob(
        "EMBEDDING_QUERY_BATCH",
        16,
        1,
        256,
        "Queries embedded in one forward pass at most: those that arrived while the previous pass ran"
        " (each gets the vector it gets alone); 1 embeds every query alone.",
    ),
    "query_cache_size": Knob(
        "EMBEDDING_QUERY_CACHE_SIZE",
        512,
        0,
        100_000,
        "Query vectors each process keeps for queries asked again (paging, retries); 0 keeps none.",
    ),
    "chunk_section_tokens": Knob(
        "CHUNK_SECTION_TOKENS",
        400,
        0,
        2048,
        "A section (a heading and what follows) up to this many word pieces stays one chunk; 0 cuts every"
        " section at `CHUNK_MAX_TOKENS`. A change re-ingests the documents.",
    ),
    "ocr_dpi": Knob(
        "OCR_DPI",
        300,
        72,
        600,
        "Resolution OCR reads pages at; a scan of lower resolution is enlarged to it first.",
    ),
    "s3_max_attempts": Knob(
        "S3_MAX_ATTEMPTS",
        3,
        1,
        10,
        "Attempts per S3 request, the first included (botocore's standard retries).",
    ),
    "jwks_min_refetch_seconds": Knob(
        "MCP_JWT_JWKS_MIN_REFETCH_SECONDS",
        30,
        0,
        3600,
        "An unknown JWT key id refetches the JWKS at most this often, so made-up key ids cannot flood "
        "the IdP.",
    ),
    "replica_retry_seconds": Knob(
        "DATABASE_REPLICA_RETRY_SECONDS",
        30,
        1,
        3600,
        "A replica that failed a search is left alone this long.",
    ),
}


def read_tuning(raw: str | None) -> dict[str, int | float]:
    """Every knob's value by its setting name: the default, or what `raw` (`key=value` pairs,
    comma-separated) says. ImproperlyConfigured names an unknown key or a bad value."""
    values: dict[str, int | float] = {knob.setting: knob.default for knob in KNOBS.values()}
    for part in filter(None, (piece.strip() for piece in (raw or "").split(","))):
        key, sep, text = (piece.strip() for piece in part.partition("="))
        knob = KNOBS.get(key)
        if not sep or knob is None:
            raise ImproperlyConfigured(
                f"{VARIABLE} takes key=value pairs of {', '.join(KNOBS)}; got {part!r}"
            )
        try:
            value: int | float = int(text) if isinstance(knob.default, int) else float(text)
        except ValueError:
            kind = "an integer" if isinstance(knob.default, int) else "a number"
            raise ImproperlyConfigured(f"{VARIABLE}: {key} must be {kind}, got {text!r}") from None
        if not knob.minimum <= value <= knob.maximum:
            raise ImproperlyConfigured(
                f"{VARIABLE}: {key} must be between {knob.minimum} and {knob.maximum}, got {text}"
            )
        values[knob.setting] = value
    return values


@functools.cache
def from_environment() -> dict[str, int | float]:
    """read_tuning of TUNING, after refusing the variables the knobs replaced. Read once a process:
    settings.py asks first, after the local settings file, and its two parts get the same values."""
    for key, knob in KNOBS.items():
        old = os.environ.get(knob.setting, "").strip()
        if old:
            raise ImproperlyConfigured(
                f"{knob.setting} is no longer read from the environment: set {VARIABLE}={key}={old} instead"
            )
    return read_tuning(envstr("TUNING", ""))


def markdown_table() -> str:
    """The README's tuning table."""
    lines = ["| Key | Setting | Default | Range | What it does |", "|---|---|---|---|---|"]
    for key, knob in KNOBS.items():
        bounds = f"{knob.minimum}–{knob.maximum}"
        lines.append(f"| `{key}` | `{knob.setting}` | `{knob.default}` | {bounds} | {knob.meaning} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown_table())
