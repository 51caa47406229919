"""A query vector goes to PostgreSQL as text: the text names the very float32 values the vector
holds, and pgvector reads them back bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection

from mnemosyne.library.vector_models import vector_text


def test_the_text_names_each_float32_exactly() -> None:
    values = np.random.default_rng(7).standard_normal((200, 384)).astype(np.float32)
    values[0, :4] = np.array([1e-38, -3.4e38, 0.0, 1 / 3], dtype=np.float32)
    for vector in values:
        text = vector_text(vector.tolist())
        assert text.startswith("[") and text.endswith("]")
        assert np.array_equal(np.array(text[1:-1].split(","), dtype=np.float32), vector)


@pytest.mark.django_db
def test_pgvector_reads_the_same_vector() -> None:
    vector = np.random.default_rng(11).standard_normal(384).astype(np.float32)
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::vector(384)::real[]", [vector_text(vector.tolist())])
        (stored,) = cursor.fetchone()
    assert np.array_equal(np.array(stored, dtype=np.float32), vector)
