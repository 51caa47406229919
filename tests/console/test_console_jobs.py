"""The console shows the background jobs MCP clients follow as tasks: a source's sync asked for
(with the uploads, on the collection's and the ingestion pages, what it did once it ended) and a
library's re-embedding (on the ingestion page). Django's test client."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from mnemosyne.ingestion import sync_jobs, tasks
from mnemosyne.library.models import Library, Source
from mnemosyne.library.services import ensure_collection, ensure_library

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_console_shows_a_sync_and_a_re_embedding_as_they_run_and_end(tmp_path: Path) -> None:
    library = ensure_library(name="Harbour")
    collection = ensure_collection(library=library, name="berths")
    (tmp_path / "berths").mkdir()
    (tmp_path / "berths" / "north.md").write_text("# North berth\n\nThe pilot boards at the outer buoy.\n")
    source = Source.objects.create(collection=collection, kind="directory", location=str(tmp_path / "berths"))
    client = Client()
    client.force_login(User.objects.create(username="boss", is_superuser=True, is_staff=True))

    sync = tasks.enqueue_sync(source)
    page = client.get(f"/console/collections/{collection.uid}/").content.decode()
    assert "Uploads and syncs" in page and "Sync of berths" in page and "queued" in page
    sync_jobs.run_sync(sync.uid)
    page = client.get(f"/console/collections/{collection.uid}/").content.decode()
    assert "1 created" in page

    Library.objects.filter(pk=library.pk).update(embedding_model="an-older-model")
    library.refresh_from_db()
    tasks.enqueue_reembed(library, model="the-servers-model")
    watched = client.get("/console/ingestion/").content.decode()
    assert "Sync of berths" in watched
    assert "Libraries being re-embedded" in watched
    assert "an-older-model → the-servers-model" in watched and "waiting for a worker" not in watched
    # The admin lists both, read-only.
    assert "Sync of berths" in client.get("/admin/library/ingestjob/?kind__exact=sync").content.decode()
    listed = client.get("/admin/library/reembedjob/").content.decode()
    assert "the-servers-model" in listed and "an-older-model" in listed
