"""A library's own synonym sets, beside those its profile ships (catalog.py)."""

from __future__ import annotations

from django.core.validators import RegexValidator
from django.db import models


class SynonymSet(models.Model):
    """A synonym set in the Solr / Elasticsearch file format (synonyms.py), attached to one library:
    applied at query time to every search confined to libraries that all carry it (by name and
    content). `text` is the set as written, its refused lines left out; imported, exported and
    edited by the library's managers (`manage.py synonyms`, the console)."""

    library = models.ForeignKey("library.Library", on_delete=models.CASCADE, related_name="synonym_sets")
    name = models.CharField(
        max_length=64,
        validators=[RegexValidator(r"^[\w][\w .-]*$", "letters, digits, spaces, '.', '-' and '_'")],
    )
    text = models.TextField()
    rule_count = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.CharField(max_length=150, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["library", "name"], name="synonym_set_name_per_library")
        ]
        ordering = ["library_id", "name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.rule_count} rules)"
