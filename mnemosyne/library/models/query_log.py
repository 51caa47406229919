"""The query log's tables: one row a tool call, and past days rolled up (mnemosyne/library/query_log.py
writes and reads them)."""

from __future__ import annotations

from django.db import models

from mnemosyne.library.models.corpus import Library


class QueryLog(models.Model):
    """One tool call, as the activity views show it (query_log.py): who, over what, on which
    library, what was asked and how it went. Kept QUERY_LOG_DAYS; a library can opt out."""

    at = models.DateTimeField(db_index=True)
    tool = models.CharField(max_length=64)
    transport = models.CharField(max_length=16)
    # The token's name and owner, the signed-in person, "jwt:<sub>", "anonymous" or "local".
    caller = models.CharField(max_length=200)
    # The library the call named, or else that of its best hit; null when neither (staff see it).
    library = models.ForeignKey(Library, null=True, on_delete=models.CASCADE, related_name="+")
    query = models.TextField(blank=True, default="")
    hits = models.IntegerField(null=True)
    top_score = models.FloatField(null=True)
    ms = models.FloatField()
    # ok, error (the tool answered with an error), invalid (its arguments were refused)
    outcome = models.CharField(max_length=16)
    reason = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        indexes = [
            models.Index(fields=["library", "at"], name="querylog_library_at"),
            # The activity lists: the slowest, the lowest best scores, the searches that found nothing.
            models.Index(fields=["-ms"], name="querylog_slowest"),
            models.Index(
                fields=["top_score"], condition=models.Q(tool="search", hits__gt=0), name="querylog_lowest"
            ),
            models.Index(fields=["-at"], condition=models.Q(tool="search", hits=0), name="querylog_nothing"),
        ]

    def __str__(self) -> str:
        return f"{self.tool} {self.at:%Y-%m-%d %H:%M:%S}"


class QueryLogDay(models.Model):
    """A past day of the query log rolled up (query_log.roll_up, by the worker): calls and errors
    per tool, library and latency bucket (query_log.LATENCY_EDGES), so the activity views read a
    month in a few hundred rows instead of every call."""

    day = models.DateField()
    tool = models.CharField(max_length=64)
    library = models.ForeignKey(Library, null=True, on_delete=models.CASCADE, related_name="+")
    # width_bucket(ms, LATENCY_EDGES): 0 under the first edge, len(edges) at or over the last.
    bucket = models.SmallIntegerField()
    calls = models.IntegerField()
    errors = models.IntegerField()

    class Meta:
        indexes = [models.Index(fields=["day"], name="querylogday_day")]

    def __str__(self) -> str:
        return f"{self.day} {self.tool}"
