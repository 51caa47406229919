"""The vector column takes the model's dimension: untyped `vector`, with one partial HNSW index per
dimension in use (vector_indexes.py makes the others), and each library records the model and the
dimension that embedded it."""

import pgvector.django.vector
from django.db import migrations, models

FORWARD = """
DROP INDEX IF EXISTS chunk_embedding_hnsw_cosine;
ALTER TABLE library_chunk ALTER COLUMN embedding TYPE vector;
CREATE INDEX chunk_embedding_hnsw_384 ON library_chunk
    USING hnsw ((embedding::vector(384)) vector_cosine_ops) WITH (m = 16, ef_construction = 64)
    WHERE vector_dims(embedding) = 384;
"""
BACKWARD = """
DROP INDEX IF EXISTS chunk_embedding_hnsw_384;
UPDATE library_chunk SET embedding = NULL WHERE vector_dims(embedding) <> 384;
ALTER TABLE library_chunk ALTER COLUMN embedding TYPE vector(384);
CREATE INDEX chunk_embedding_hnsw_cosine ON library_chunk
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
"""


class Migration(migrations.Migration):

    dependencies = [
        ("library", "0010_source_web"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(FORWARD, BACKWARD)],
            state_operations=[
                migrations.RemoveIndex(model_name="chunk", name="chunk_embedding_hnsw_cosine"),
                migrations.AlterField(
                    model_name="chunk",
                    name="embedding",
                    field=pgvector.django.vector.VectorField(null=True),
                ),
            ],
        ),
        migrations.AddField(
            model_name="library",
            name="embedding_model",
            field=models.CharField(blank=True, default="", max_length=500),
        ),
        migrations.AddField(
            model_name="library",
            name="embedding_dimensions",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        # Libraries embedded before this migration were embedded by the bundled model.
        migrations.RunSQL(
            "UPDATE library_library SET embedding_model = 'all-MiniLM-L6-v2', embedding_dimensions = 384 "
            "WHERE EXISTS (SELECT FROM library_chunk c WHERE c.library_id = library_library.id "
            "AND c.embedding IS NOT NULL)",
            migrations.RunSQL.noop,
        ),
    ]
