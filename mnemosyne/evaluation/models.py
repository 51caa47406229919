"""Evaluation sets (questions with the evidence that answers them) and the runs measured on them.

A set belongs to one library: its evidence is that library's items, and its runs search it. The
evidence of a question is an item, an item's page(s), or one chunk, each with a grade (1 unless a
graded set says otherwise). A run keeps its configuration, its measures, and every question's
rank and top hits (runs.py), so two runs can be compared question by question (comparison.py)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import F
from django.db.models.functions import MD5
from django.utils import timezone

from mnemosyne.lib import uids
from mnemosyne.library.models import Item, Library


class EvaluationSet(models.Model):
    uid = models.CharField(max_length=32, unique=True, default=uids.new_evaluation_set_uid, editable=False)
    name = models.CharField(max_length=200, unique=True)
    library = models.ForeignKey(Library, on_delete=models.CASCADE, related_name="evaluation_sets")
    description = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Question(models.Model):
    evaluation_set = models.ForeignKey(EvaluationSet, on_delete=models.CASCADE, related_name="questions")
    text = models.TextField()
    # Where it came from: the imported file's query id, "playground", "activity".
    origin = models.CharField(max_length=200, blank=True, default="")
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [
            # A digest: a question can be longer than a b-tree entry may be.
            models.UniqueConstraint(F("evaluation_set"), MD5("text"), name="evaluation_question_once")
        ]

    def __str__(self) -> str:
        return self.text[:80]


class Evidence(models.Model):
    """What answers a question: an item; with pages, those pages of it; with a chunk, that chunk
    (by uid: an item read again has new chunks, and then the chunk's evidence finds nothing)."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="evidence")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    pages = ArrayField(models.PositiveIntegerField(), blank=True, default=list)
    chunk_uid = models.CharField(max_length=32, blank=True, default="")
    grade = models.PositiveSmallIntegerField(default=1)

    def __str__(self) -> str:
        return f"{self.item_id} {self.pages or ''}{self.chunk_uid}"


# A running run reports at least once a second (runs.PROGRESS_SECONDS) — or once a search, when a
# search takes longer; silent this long, its worker is taken to have stopped.
STALLED_SECONDS = 120


class RunStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Run(models.Model):
    uid = models.CharField(max_length=32, unique=True, default=uids.new_run_uid, editable=False)
    evaluation_set = models.ForeignKey(EvaluationSet, on_delete=models.CASCADE, related_name="runs")
    label = models.CharField(max_length=200, blank=True, default="")
    # The search arguments, embedding model, reranker, project version and number of chunks.
    configuration = models.JSONField(default=dict)
    # success@1/3/10, mrr@10, ndcg@10, recall@k, latency p50/p95 (ms), questions, seconds.
    measures = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    # Asked to stop: the run stops before its next question and is then cancelled.
    cancel_requested = models.BooleanField(default=False)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # When the running run last reported: a run that stops reporting lost its worker (runs.stalled).
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The MCP caller that started it (access.principal's caller_key): only it follows it as a task.
    requested_by = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["evaluation_set", "created_at"], name="evaluation_run_set_at")]

    def __str__(self) -> str:
        return self.uid

    @property
    def stalled(self) -> bool:
        """Running, but silent for STALLED_SECONDS: its worker stopped (killed, restarted)."""
        if self.status != RunStatus.RUNNING:
            return False
        last = self.heartbeat_at or self.started_at or self.created_at
        return (timezone.now() - last).total_seconds() > STALLED_SECONDS

    @property
    def headline(self) -> dict[str, object]:
        """The measures a list of runs shows, by names a template can use (no "@")."""
        return {
            "ndcg_at_10": self.measures.get("ndcg@10"),
            "success_at_3": self.measures.get("success@3"),
            "p95_ms": (self.measures.get("latency_ms") or {}).get("p95"),
        }


class Answer(models.Model):
    """One question of a run: the rank of its first relevant hit (null: none in the results), its
    own measures, how long its search took, and its top hits as they were."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="answers")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="answers")
    rank = models.PositiveIntegerField(null=True)
    ndcg_at_10 = models.FloatField()
    reciprocal_rank = models.FloatField()
    recall = models.FloatField()
    ms = models.FloatField()
    # [{chunk_uid, item_uid, title, page, score, relevant}], best first.
    hits = models.JSONField(default=list)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "question"], name="evaluation_answer_once")]
