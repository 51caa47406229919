"""The concept graph in PostgreSQL: concepts, chunk mentions, co-occurrence edges.

Edge weights follow mentions by statement-level triggers (migration 0001), so they stay right
whoever inserts or deletes mentions, including Django's cascade when chunks are deleted.
"""

from __future__ import annotations

from django.db import models


class Concept(models.Model):
    key = models.TextField(unique=True, help_text="Normalised form, e.g. 'neural network'.")
    label = models.TextField(help_text="A readable surface form, e.g. 'Neural Networks'.")

    def __str__(self) -> str:
        return self.label


class Mention(models.Model):
    """One chunk mentions one concept, with the extractor's score."""

    pk = models.CompositePrimaryKey("chunk", "concept")
    # By name: the graph sits below the library package, which it must not import.
    chunk = models.ForeignKey("library.Chunk", on_delete=models.CASCADE, related_name="+", db_index=False)
    concept = models.ForeignKey(Concept, on_delete=models.CASCADE, related_name="+", db_index=False)
    score = models.FloatField()
    # Copied from the chunk so filtered queries read only mentions.
    library_id = models.BigIntegerField()
    collection_id = models.BigIntegerField()

    class Meta:
        indexes = [
            models.Index(
                fields=["concept", "chunk"],
                include=["score", "library_id", "collection_id"],
                name="mention_by_concept",
            ),
            models.Index(fields=["library_id", "concept"], name="mention_by_library"),
            models.Index(fields=["collection_id", "concept"], name="mention_by_collection"),
        ]


class Edge(models.Model):
    """Two concepts co-occur in `weight` chunks; each unordered pair is stored once, source < target."""

    pk = models.CompositePrimaryKey("source", "target")
    source = models.ForeignKey(Concept, on_delete=models.CASCADE, related_name="+", db_index=False)
    target = models.ForeignKey(Concept, on_delete=models.CASCADE, related_name="+", db_index=False)
    weight = models.IntegerField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(source__lt=models.F("target")), name="edge_source_lt_target"
            ),
        ]
        indexes = [models.Index(fields=["target"], include=["weight"], name="edge_by_target")]


class ProjectionChange(models.Model):
    """The outbox: a chunk whose mentions changed in PostgreSQL and must be re-projected to Neo4j.

    Written in the same transaction as the change (only when GRAPH_BACKEND=neo4j), drained after
    commit (graph.projection): a rolled-back write leaves no row, so Neo4j never sees it.
    """

    chunk_id = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "graph_outbox"
