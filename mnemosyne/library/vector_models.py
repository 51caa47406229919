"""Which model's vectors a library holds, and the HNSW index for each vector dimension in use.

A library records the model that embedded it (Library.embedding_model, an Embedder's model_id)
and the vectors' dimension at its first write. Vectors of two models are not comparable, so a
library is written and searched with its own model only: another model is refused with a message
that says what to do. The vector column is untyped; each dimension has a partial HNSW index on
`embedding::vector(N)`, made the first time a library of that dimension is written (migration 0011
made the one for 384).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import psycopg
from django.db import connection
from django.db.backends.utils import CursorWrapper
from pgvector import Vector
from pgvector.psycopg.vector import VectorBinaryDumper
from psycopg.types import TypeInfo

from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import Library

# The HNSW indexes' build parameters (migration 0011 uses the same).
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
# Dimensions whose index this process has seen exist.
_indexed: set[int] = set()


class ModelMismatch(InvalidArgument):
    """The library holds another model's vectors."""


def vector_text(vector: Sequence[float]) -> str:
    """pgvector's text form of a vector, '[x,y,…]': each value as the float32 the column stores,
    in nine significant digits (which name every float32 exactly: the same vector, parsed back; a
    float's shortest repr costs twice the time here and up to 17 digits for the server to read)."""
    return "[" + ",".join([f"{value:.9g}" for value in np.asarray(vector, dtype=np.float32).tolist()]) + "]"


# Database sessions whose adapters send a pgvector Vector in binary, typed `vector` (True), or
# whose database has no `vector` type to type it with (False).
_BINARY_VECTORS: weakref.WeakKeyDictionary[psycopg.Connection[Any], bool] = weakref.WeakKeyDictionary()


def query_vector(cursor: CursorWrapper, vector: Sequence[float]) -> Any:
    """`vector` as a statement's parameter on `cursor`: pgvector's binary form, typed `vector`,
    where the cursor binds on the server (lib/prepared.py) — no text for this process to write
    or for the server to read, about 0.15 ms of a search — else its text form (vector_text).

    The binary dumper is registered for pgvector's Vector class alone, on each session the first
    time it is asked (one lookup of the type's oid): other parameters are dumped as before."""
    raw = cursor.cursor
    if isinstance(raw, psycopg.ClientCursor) or not _binary_vectors(raw):
        return vector_text(vector)
    return Vector(np.asarray(vector, dtype=np.float32))


def _binary_vectors(cursor: psycopg.Cursor[Any]) -> bool:
    session = cursor.connection
    known = _BINARY_VECTORS.get(session)
    if known is None:
        info = TypeInfo.fetch(session, "vector")
        if info is not None:
            dumper = type("VectorDumper", (VectorBinaryDumper,), {"oid": info.oid})
            # The session's cursors from now on, and this one (its adapters were copied already).
            session.adapters.register_dumper(Vector, dumper)
            cursor.adapters.register_dumper(Vector, dumper)
        known = _BINARY_VECTORS[session] = info is not None
    return known


def index_name(dimensions: int) -> str:
    return f"chunk_embedding_hnsw_{dimensions}"


def ensure_index(dimensions: int) -> None:
    """The partial HNSW index for vectors of this dimension (created when missing)."""
    if dimensions in _indexed:
        return
    if not 1 <= dimensions <= 2000:
        # pgvector's HNSW indexes vectors of up to 2,000 dimensions.
        raise InvalidArgument(
            f"vectors of {dimensions} dimensions cannot be indexed (HNSW takes up to 2,000)"
        )
    with connection.cursor() as cursor:
        cursor.execute(
            index_definition(dimensions, m=HNSW_M, ef_construction=HNSW_EF_CONSTRUCTION, how="IF NOT EXISTS")
        )
    _indexed.add(dimensions)


def index_definition(dimensions: int, *, m: int, ef_construction: int, how: str, name: str = "") -> str:
    """CREATE INDEX for the dimension's partial HNSW index (`how`: "IF NOT EXISTS" or "CONCURRENTLY";
    `name`: another name than the index's own, for one built beside it)."""
    return (
        f"CREATE INDEX {how} {name or index_name(dimensions)} ON library_chunk "
        f"USING hnsw ((embedding::vector({dimensions})) vector_cosine_ops) "
        f"WITH (m = {m}, ef_construction = {ef_construction}) "
        f"WHERE vector_dims(embedding) = {dimensions}"
    )


def claim(library: Library, *, model_id: str, dimensions: int) -> None:
    """Before writing vectors: record the model on a library that has none, refuse another one."""
    if not library.embedding_model:
        Library.objects.filter(pk=library.pk, embedding_model="").update(
            embedding_model=model_id, embedding_dimensions=dimensions
        )
        library.refresh_from_db(fields=["embedding_model", "embedding_dimensions"])
    check(library, model_id=model_id)
    ensure_index(dimensions)


def check(library: Library, *, model_id: str) -> None:
    """ModelMismatch when the library holds vectors of a model other than `model_id`."""
    if library.embedding_model and library.embedding_model != model_id:
        raise ModelMismatch(
            f"library {library.name!r} holds vectors of the model {library.embedding_model!r} "
            f"({library.embedding_dimensions} dimensions), and this server embeds with {model_id!r}: "
            f"set EMBEDDING_MODEL (and EMBEDDING_URL) back, or re-embed the library with "
            f"`manage.py reembed --library {library.uid}`"
        )


def hold(library_id: int, *, model_id: str) -> None:
    """In a write's transaction: the library takes `model_id`'s vectors, and keeps taking them until
    the transaction ends (a re-embedding's switch waits for it: FOR SHARE against its FOR UPDATE)."""
    rows = list(
        Library.objects.raw(
            "SELECT id, uid, name, embedding_model, embedding_dimensions FROM library_library "
            "WHERE id = %s FOR SHARE",
            [library_id],
        )
    )
    if not rows:
        raise InvalidArgument("the library was deleted while its documents were being ingested")
    check(rows[0], model_id=model_id)


def check_all(library_ids: Iterable[int] | None, *, model_id: str) -> None:
    """check() for every library a search reads (None: every library)."""
    libraries = Library.objects.exclude(embedding_model="").exclude(embedding_model=model_id)
    if library_ids is not None:
        libraries = libraries.filter(pk__in=list(library_ids))
    other = libraries.only("uid", "name", "embedding_model", "embedding_dimensions").first()
    if other is not None:
        check(other, model_id=model_id)
