"""Every background task is declared in one module, and tasks queued under the modules that
declared them before are found by a worker of this version (migration library 0016)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from django.apps import apps
from django.tasks import Task
from django_tasks_db.models import DBTaskResult

import mnemosyne.ingestion
from mnemosyne.ingestion import tasks

pytestmark = pytest.mark.django_db

migration = importlib.import_module("mnemosyne.library.migrations.0016_background_tasks_in_one_module")


def test_every_background_task_is_declared_in_the_tasks_module() -> None:
    declared: dict[str, str] = {}
    for module_info in pkgutil.walk_packages(mnemosyne.ingestion.__path__, "mnemosyne.ingestion."):
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if isinstance(value, Task):
                declared[value.name] = value.module_path
    assert declared == {
        name: f"mnemosyne.ingestion.tasks.{name}"
        for name in (
            "ingest_source",
            "ingest_upload",
            "sync_scheduled",
            "sync_once",
            "sync_job",
            "reembed_library",
            "refresh_context",
            "reread_documents",
        )
    }


def test_a_task_queued_under_its_old_module_runs_under_the_new_one() -> None:
    queued = tasks.refresh_context.enqueue(item_uid="itm_gone")
    old = "mnemosyne.ingestion.identity_corrections.refresh_context"
    DBTaskResult.objects.filter(id=queued.id).update(task_path=old)

    migration.forwards(apps, None)

    row = DBTaskResult.objects.get(id=queued.id)
    assert row.task_path == "mnemosyne.ingestion.tasks.refresh_context"
    assert row.task.func(item_uid="itm_gone") == {"item_uid": "itm_gone", "chunks": 0}

    migration.backwards(apps, None)
    assert DBTaskResult.objects.get(id=queued.id).task_path == old
