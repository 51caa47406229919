"""Every background task is now declared in mnemosyne/ingestion/tasks.py: tasks queued (or scheduled
for later) under the modules that declared them before are renamed, so a worker of this version
finds them. The reverse renames them back."""

from django.db import migrations

MOVED = {
    "mnemosyne.ingestion.syncing.sync_scheduled": "mnemosyne.ingestion.tasks.sync_scheduled",
    "mnemosyne.ingestion.syncing.sync_once": "mnemosyne.ingestion.tasks.sync_once",
    "mnemosyne.ingestion.jobs.ingest_upload": "mnemosyne.ingestion.tasks.ingest_upload",
    "mnemosyne.ingestion.identity_corrections.refresh_context": "mnemosyne.ingestion.tasks.refresh_context",
}


def _rename(apps, renames):
    results = apps.get_model("django_tasks_database", "DBTaskResult")
    for old, new in renames.items():
        results.objects.filter(task_path=old).update(task_path=new)


def forwards(apps, schema_editor):
    _rename(apps, MOVED)


def backwards(apps, schema_editor):
    _rename(apps, {new: old for old, new in MOVED.items()})


class Migration(migrations.Migration):
    dependencies = [
        ("library", "0015_workerbeat"),
        ("django_tasks_database", "0021_conditional_partial_index_ordering"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
