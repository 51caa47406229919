"""Background ingestion with real `manage.py db_worker` processes against the test database."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import IO

import psycopg
import pytest
from django.db import connection
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from mnemosyne.embedding import Embedder
from mnemosyne.graph.models import Mention
from mnemosyne.ingestion import worker_beats
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.ingestion.tasks import enqueue_paths
from mnemosyne.library.models import Chunk, EmbeddingStatus, Item, Posting, QueryLog, WorkerBeat
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.storage import get_chunk_store
from tests.servers import ROOT, child_env, database_url

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Bounds on waits for state; the worker loads torch and the model before its first task.
WORKER_TIMEOUT = 300.0
POLL = 0.1


@pytest.fixture
def start_worker(shared_data_dir: Path, tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    env = child_env(shared_data_dir, {"DATABASE_CONN_MAX_AGE": "0"})
    started: list[subprocess.Popen[bytes]] = []
    logs: list[IO[bytes]] = []

    def start(*extra: str) -> subprocess.Popen[bytes]:
        log = (tmp_path / f"worker-{len(started)}.log").open("wb")
        logs.append(log)
        # --no-reload: with the autoreloader the worker would be a child we could not kill directly.
        command = [sys.executable, "manage.py", "db_worker", "--no-reload", "--no-startup-delay"]
        process = subprocess.Popen(
            [*command, "--interval", str(POLL), *extra],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
    for log in logs:
        log.close()


def _wait_for(
    condition: Callable[[], bool], what: str, process: subprocess.Popen[bytes] | None = None
) -> None:
    deadline = time.monotonic() + WORKER_TIMEOUT
    while not condition():
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the worker exited (code {process.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(POLL)


def test_a_worker_ingests_the_enqueued_files(tmp_path: Path, start_worker) -> None:
    root = tmp_path / "queue"
    root.mkdir()
    (root / "tides.md").write_text("# Tides\n\nThe spring tide floods the lower quay twice a month.\n")
    (root / "empty.txt").write_text("")
    collection = ensure_collection(library=ensure_library(name="Queued"), name="docs")
    summary = enqueue_paths([root], collection=collection, report=lambda line: None)
    assert summary.enqueued == 2

    worker = start_worker("--batch")
    assert worker.wait(timeout=WORKER_TIMEOUT) == 0

    item = Item.objects.get(collection=collection, source="queue/tides.md")
    assert item.embedding_status == EmbeddingStatus.COMPLETE
    assert item.chunk_count == Chunk.objects.filter(item=item).count() > 0
    results = {r.args_kwargs["kwargs"]["source"]: r for r in DBTaskResult.objects.all()}
    assert results["queue/tides.md"].status == TaskResultStatus.SUCCESSFUL
    assert (results["queue/tides.md"].return_value or {})["outcome"] == "created"
    failed = results["queue/empty.txt"]
    assert failed.status == TaskResultStatus.FAILED
    assert failed.exception_class_path == "mnemosyne.ingestion.tasks.IngestTaskFailed"
    assert "empty file" in failed.traceback


def test_a_worker_says_it_is_alive_while_idle_and_goes_when_it_stops(start_worker) -> None:
    # A query-log row past QUERY_LOG_DAYS (30), and one within it: the worker keeps the log.
    old, recent = (
        QueryLog.objects.create(
            at=timezone.now() - timedelta(days=age),
            tool="search",
            transport="http",
            caller="c",
            ms=1.0,
            outcome="ok",
        )
        for age in (31, 1)
    )
    worker = start_worker()  # no task queued: it only polls
    _wait_for(lambda: len(worker_beats.alive()) == 1, "the worker's first heartbeat", worker)
    (beat,) = worker_beats.alive()
    assert beat.name.endswith(f":{worker.pid}")
    _wait_for(lambda: not QueryLog.objects.filter(pk=old.pk).exists(), "the query log pruned", worker)
    assert QueryLog.objects.filter(pk=recent.pk).exists()
    worker.send_signal(signal.SIGINT)  # Ctrl-C: the worker finishes and exits
    worker.wait(timeout=60)
    assert not WorkerBeat.objects.exists()  # removed as it exited


def test_two_workers_share_one_queue_without_double_work(tmp_path: Path, start_worker) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    for number in range(40):
        (root / f"note-{number:02}.md").write_text(
            f"# Note {number}\n\nHarbour log entry {number}: the pilot boat met ship number {number}.\n"
        )
    collection = ensure_collection(library=ensure_library(name="Shared queue"), name="docs")
    assert enqueue_paths([root], collection=collection, report=lambda line: None).enqueued == 40

    # Two workers, as on two hosts sharing the database: each claims tasks with SKIP LOCKED.
    workers = [start_worker("--batch"), start_worker("--batch")]
    for worker in workers:
        assert worker.wait(timeout=WORKER_TIMEOUT) == 0

    results = list(DBTaskResult.objects.filter(args_kwargs__kwargs__source__startswith="shared/"))
    assert len(results) == 40
    assert all(result.status == TaskResultStatus.SUCCESSFUL for result in results)
    # Each task claimed once, by one worker, and its file ingested once (created, never "unchanged").
    assert all(len(result.worker_ids) == 1 for result in results)
    assert {(result.return_value or {}).get("outcome") for result in results} == {"created"}
    assert len({result.worker_ids[0] for result in results}) == 2, "both workers took tasks"
    assert Item.objects.filter(collection=collection).count() == 40


def test_a_worker_killed_mid_write_leaves_the_item_retryable(
    tmp_path: Path, start_worker, embedder: Embedder
) -> None:
    root = tmp_path / "manual"
    root.mkdir()
    page = root / "pumps.md"
    page.write_text(_document("Bilge pumps", paragraphs=6))
    collection = ensure_collection(library=ensure_library(name="Ship"), name="manuals")
    ingest_paths([root], collection=collection, report=lambda line: None, embedder=embedder)
    item = Item.objects.get(collection=collection, source="manual/pumps.md")
    before = _snapshot(item)
    assert before["chunks"] and before["postings"] and before["mentions"]

    page.write_text(_document("Ballast pumps", paragraphs=40))
    enqueue_paths([root], collection=collection, report=lambda line: None)
    # Holding the old chunks' rows makes the worker block inside its write transaction, after it has
    # deleted the old postings and graph mentions there: the worst moment to die.
    with psycopg.connect(database_url()) as lock:
        lock.execute("SELECT id FROM library_chunk WHERE item_id = %s FOR UPDATE", [item.pk])
        worker = start_worker()
        _wait_for(lambda: bool(_blocked_by(lock.info.backend_pid)), "the worker to reach its write", worker)
        assert Item.objects.get(pk=item.pk).embedding_status == EmbeddingStatus.PROCESSING
        blocked = _blocked_by(lock.info.backend_pid)
        assert _queries(blocked)[0].startswith('DELETE FROM "library_chunk"')
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
        lock.rollback()
    # The dead worker's server session ends once it next talks to its (gone) client.
    _wait_for(lambda: not _sessions_alive(blocked), "the killed worker's session to end")

    item.refresh_from_db()
    assert item.embedding_status == EmbeddingStatus.PROCESSING
    assert _snapshot(item) == before
    store = get_chunk_store()
    for key in before["keys"]:
        assert store.get(key)

    summary = ingest_paths([root], collection=collection, report=lambda line: None, embedder=embedder)

    assert summary.counts()["updated"] == 1
    item.refresh_from_db()
    assert item.embedding_status == EmbeddingStatus.COMPLETE
    after = _snapshot(item)
    assert item.chunk_count == len(after["chunks"]) > len(before["chunks"])
    assert set(after["chunks"]).isdisjoint(before["chunks"])
    assert "Ballast" in store.get(after["keys"][0]).decode()


def _document(title: str, *, paragraphs: int) -> str:
    body = "\n\n".join(
        f"## Step {n}\n\nCheck the {title.lower()} strainer {n}, the impeller housing and the "
        f"non-return valve before sailing; log pressure reading {n * 7} in the engine book."
        for n in range(paragraphs)
    )
    return f"# {title}\n\n{body}\n"


def _snapshot(item: Item) -> dict[str, list]:
    chunks = list(Chunk.objects.filter(item=item).order_by("ordinal"))
    ids = [chunk.pk for chunk in chunks]
    return {
        "chunks": [chunk.uid for chunk in chunks],
        "keys": [chunk.storage_key for chunk in chunks],
        "count": [Item.objects.get(pk=item.pk).chunk_count],
        "postings": sorted(Posting.objects.filter(chunk_id__in=ids).values_list("chunk_id", "term_id")),
        "mentions": sorted(Mention.objects.filter(chunk_id__in=ids).values_list("chunk_id", "concept_id")),
    }


def _blocked_by(pid: int) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))", [pid])
        return [row[0] for row in cursor.fetchall()]


def _queries(pids: list[int]) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT query FROM pg_stat_activity WHERE pid = ANY(%s)", [pids])
        return [row[0] for row in cursor.fetchall()]


def _sessions_alive(pids: list[int]) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", [pids])
        return bool(cursor.fetchone()[0])
