"""The console in Chromium (Playwright), against uvicorn over real HTTP, under LIBRARY_ACCESS=grants:
an editor uploads a PDF, watches the background worker read it, retries a failed reading and deletes
with a confirmation; a reader of the same library sees no control that changes it. axe-core on every
page.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from access.library_access import Role
from access.library_grants import grant
from access.models import MCPAuditEvent
from mnemosyne.embedding import Embedder
from mnemosyne.library.models import EmbeddingStatus, Item
from mnemosyne.library.services import ensure_collection, ensure_library
from tests.browser import axe_violations, chromium, in_thread, screenshot, sign_in
from tests.conftest import FIXTURES
from tests.console.conftest import MAX_BYTES
from tests.servers import db_worker

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

PASSWORD = "a console password 4 tests"


def test_an_editor_uploads_a_pdf_watches_it_read_retries_a_failure_and_deletes_with_a_confirmation(
    console_url: tuple[str, Path], embedder: Embedder, tmp_path: Path, settings: Any, django_db_blocker: Any
) -> None:
    base, data_dir = console_url
    settings.MNEMOSYNE_DATA_DIR = data_dir
    notes = tmp_path / "docs" / "release-notes.pdf"
    notes.parent.mkdir()
    shutil.copy(FIXTURES / "pdfs" / "libtasn1.pdf", notes)
    guides = ensure_collection(library=ensure_library(name="Guides"), name="main")
    # An item whose last reading failed (say the embedding endpoint was down), its file still there.
    failed = Item.objects.create(
        collection=guides,
        source="docs/release-notes.pdf",
        title="release-notes",
        item_type="pdf",
        metadata={"path": str(notes)},
        embedding_status=EmbeddingStatus.FAILED,
        embedding_error="the embedding endpoint did not answer in 30 s",
    )
    eve = User.objects.create_user("eve", password=PASSWORD)
    ray = User.objects.create_user("ray", password=PASSWORD)
    grant(library=guides.library, role=Role.EDITOR, user=eve, actor="test")
    grant(library=guides.library, role=Role.READER, user=ray, actor="test")
    collection_url = f"{base}/console/collections/{guides.uid}/"

    with django_db_blocker.unblock(), db_worker(data_dir, log_name="console-worker"), chromium() as browser:
        reader = browser.new_context().new_page()
        reader.goto(collection_url)
        sign_in(reader, "ray", PASSWORD)
        # A reader sees the failure and its reason, and no way to change anything.
        assert failed.embedding_error[:40] in reader.locator("#items").inner_text()
        assert reader.locator("#upload").count() == 0 and reader.locator("text=again").count() == 0
        csrf = reader.context.cookies()
        token = next(cookie["value"] for cookie in csrf if cookie["name"] == "csrftoken")
        refused = reader.request.post(
            f"{collection_url}retry-failed",
            form={"csrfmiddlewaretoken": token},
            headers={"Referer": collection_url},
        )
        assert refused.status == 403 and "not change it" in refused.text()

        page = browser.new_context().new_page()
        page.goto(collection_url)
        sign_in(page, "eve", PASSWORD)
        # One action reads it again from where it came from.
        page.click("text=Read the 1 failed item again")
        assert "Queued 1 of 1 failed items" in page.locator(".messages").inner_text()
        _wait_for(page, lambda: "complete: 1" in page.locator(".counts").inner_text(), collection_url)

        # Two files dropped at once: each becomes a job the page follows until it is read.
        page.set_input_files("#files", [FIXTURES / "pdfs" / "libtasn1.pdf", FIXTURES / "docs" / "backups.md"])
        page.click("#upload button[type=submit]")
        page.wait_for_selector("#jobs tbody tr")
        page.wait_for_function(
            "() => [...document.querySelectorAll('#jobs tbody .badge')]"
            ".every(badge => badge.textContent === 'complete')",
            timeout=180_000,
        )
        assert page.locator("#jobs tbody tr").count() == 2
        assert axe_violations(page) == []
        screenshot(page, "console-upload")

        # The ingestion view: what was just read, with its time per stage; it polls by itself.
        page.click("text=Ingestion")
        page.wait_for_url(re.compile(r"/console/ingestion/?$"))
        timed = page.locator("table.stages tbody tr").all_inner_texts()
        assert len(timed) == 3 and all(re.search(r"\d+\.\d{3}", row) for row in timed)
        assert "workers alive: 1" in page.locator(".counts").inner_text()
        assert page.locator("#live").get_attribute("hx-trigger") == "every 2s"
        assert axe_violations(page) == []
        screenshot(page, "console-ingestion")
        page.goto(collection_url)

        # What cannot be read is refused in words, file by file; nothing is queued for it.
        (tmp_path / "tool.exe").write_bytes(b"MZ")
        (tmp_path / "huge.md").write_bytes(b"# Huge\n\n" + b"x" * MAX_BYTES)
        page.set_input_files("#files", [tmp_path / "tool.exe", tmp_path / "huge.md"])
        page.click("#upload button[type=submit]")
        page.wait_for_selector("#jobs [role=alert]")
        said = page.locator("#jobs [role=alert]").all_inner_texts()
        assert said[0].startswith("tool.exe: not a type Mnemosyne reads (")
        assert said[1] == f"huge.md: over the limit of {MAX_BYTES:,} bytes."  # not read past it
        many = [tmp_path / f"note-{number}.md" for number in range(21)]
        for path in many:
            path.write_text("# Note\n\nShort.\n")
        page.set_input_files("#files", many)
        page.click("#upload button[type=submit]")
        page.wait_for_selector("#jobs >> text=21 files at once is more than 20")
        assert page.locator("main h1").inner_text() == "main"  # the rows swapped in, the page kept
        assert page.locator("#jobs tbody tr").count() == 2  # still the two read above

        # A source kept in sync: a directory of this machine is for staff only; then added and synced.
        synced = tmp_path / "synced"
        synced.mkdir()
        (synced / "runbook.md").write_text("# Runbook\n\nRestart the worker when the queue stalls.\n")
        page.click("text=Add a source kept in sync")
        page.fill("#location", str(synced))
        page.click("text=Add and sync now")
        assert "Only staff may add a directory" in page.locator(".messages").inner_text()
        assert in_thread(lambda: User.objects.filter(username="eve").update(is_staff=True)) == 1
        # The browser refuses "soon" for minutes itself (the field's pattern); the server does too.
        form_token = page.locator("main input[name=csrfmiddlewaretoken]").first.input_value()
        form: dict[str, str | float | bool] = {
            "csrfmiddlewaretoken": form_token,
            "location": str(synced),
            "every": "soon",
        }
        answered = page.request.post(f"{collection_url}sources", form=form)  # redirected to the collection
        assert "a whole number of minutes" in answered.text()
        page.click("text=Add a source kept in sync")
        page.fill("#location", str(synced))
        page.click("text=Add and sync now")
        assert "its first sync is queued" in page.locator(".messages").inner_text()
        _wait_for(page, lambda: page.locator("#items a:text-is('Runbook')").count() == 1, collection_url)

        # Deleting asks first, showing what goes; only the typed confirmation deletes.
        page.click("#jobs a >> text=backup")
        page.click("text=Delete this item…")
        assert "chunk" in page.locator("main ul").inner_text()
        assert axe_violations(page) == []
        token = page.locator("main input[name=csrfmiddlewaretoken]").input_value()
        target = page.locator("main form").get_attribute("action") or ""
        wrong = page.request.post(base + target, form={"csrfmiddlewaretoken": token, "confirm": "yes"})
        assert wrong.status == 200 and "Delete it" in wrong.text()  # asked again, nothing deleted
        page.click("text=Delete it")
        assert "Deleted “backups”" in page.locator(".messages").inner_text()
    changes = [
        (event.actor, event.detail["tool"], event.detail["transport"])
        for event in MCPAuditEvent.objects.filter(kind=MCPAuditEvent.Kind.WRITE_TOOL_CALL).order_by("id")
    ]
    assert changes == [
        ("eve", "retry_failed", "console"),
        ("eve", "upsert_item", "console"),
        ("eve", "upsert_item", "console"),
        ("eve", "add_source", "console"),
        ("eve", "delete_item", "console"),
    ]
    titles = sorted(Item.objects.filter(collection=guides).values_list("title", flat=True))
    assert sorted(title.lower() for title in titles) == ["libtasn1", "libtasn1", "runbook"]


def _wait_for(page: Any, done: Any, url: str, seconds: float = 180) -> None:
    """Reload `url` until `done()` (the background worker is reading)."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, page.locator("main").inner_text()[:2000]
        page.wait_for_timeout(1000)
        page.goto(url)
