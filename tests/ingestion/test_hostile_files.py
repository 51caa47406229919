"""Files made to hurt the server, through every door: `manage.py ingest`, `upsert_item` with
`background: false` over HTTP, and a console upload read by the background worker. Each is refused
with one line within a minute, no process of the server, the worker, the command or a parser child
passes 2 GiB, the server answers `search` throughout, and nothing is written outside the data
directory (the processes' temporary directory stays empty)."""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from access.services import create_token
from mnemosyne.ingestion import formats
from mnemosyne.library.models import IngestJob, Item
from mnemosyne.library.services import ensure_collection, ensure_library
from tests.ingestion.hostile_files import IN_MEMORY, csv_long_line
from tests.mcp_server.clients import JSON_HEADERS, call_all, rpc
from tests.servers import database_url, db_worker, run_manage, uvicorn_server

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

GIB = 1024**3
ONE_LINE_REASONS = {
    "bomb.docx": "too large once unpacked",
    "laughs.xlsx": "no readable cells",
    "pages.pdf": "no extractable text",
    "loop.pdf": "cannot parse pdf file",
    "nested.html": "nest more than 1000 deep",
    "escaping.epub": "not a readable EPUB file",
    "line.csv": "over",
}


class Watch:
    """The largest resident memory of any process this test started (the command, the server, the
    worker, the parser children of each), sampled; not the test's own process, whose size is what
    the tests run before it in the same worker left."""

    def __init__(self) -> None:
        self.peak = 0
        self.largest = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            for process in me.children(recursive=True):
                try:
                    rss = process.memory_info().rss
                    if rss > self.peak:
                        self.peak, self.largest = rss, " ".join(process.cmdline()[:4])
                except psutil.Error:
                    continue
            time.sleep(0.1)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "hostile"
    folder.mkdir()
    paths = {}
    for name, make in IN_MEMORY.items():
        (folder / name).write_bytes(make())
        paths[name] = folder / name
    csv_long_line(folder / "line.csv")
    paths["line.csv"] = folder / "line.csv"
    return paths


@pytest.fixture
def temporary(tmp_path: Path) -> Iterator[Path]:
    """The temporary directory the command, server, worker and parser children are given."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    yield folder


def test_hostile_files_are_refused_in_one_line_through_every_door(
    files: dict[str, Path], temporary: Path, tmp_path: Path, embedder: Any
) -> None:
    watch = Watch()
    data_dir = tmp_path / "data"
    # The processes' own temporary directory is their data directory's (the default, which the
    # test suite's setting would otherwise replace); TMPDIR, as a system's, must stay empty.
    environment = {
        "TMPDIR": str(temporary),
        "MNEMOSYNE_TMP_DIR": str(data_dir / "tmp"),
        "MCP_REQUIRE_AUTH": "true",
    }
    collection = ensure_collection(library=ensure_library(name="Strangers"), name="uploads")

    # 1. The command line, on all seven at once.
    started = time.monotonic()
    command = run_manage(
        data_dir,
        database_url(),
        "ingest",
        str(files["bomb.docx"].parent),
        "--library",
        "Strangers",
        "--collection",
        "uploads",
        "--no-progress",
        env=environment,
        timeout=600,
    )
    lines = command.stdout.splitlines() + command.stderr.splitlines()
    for name, reason in ONE_LINE_REASONS.items():
        said = [line for line in lines if name in line]
        assert len(said) == 1 and reason in said[0], (name, lines)
    assert "Traceback" not in command.stdout + command.stderr
    assert time.monotonic() - started < 60 * len(ONE_LINE_REASONS)

    # 2. upsert_item with background false, while searches go on; 3. a console upload.
    owner = User.objects.create_user("stranger", password="a long test password", is_staff=True)
    _, token = create_token(user=owner, name="uploads", scopes=["read", "write"])
    searches: list[str] = []
    stop = threading.Event()
    with (
        uvicorn_server(data_dir, env=environment, log_name="hostile") as base,
        db_worker(data_dir, env=environment),
    ):

        def search_all_along() -> None:
            while not stop.is_set():
                (found,) = call_all(base, token, [("search", {"query": "anything at all", "limit": 3})])
                searches.append("ok" if not getattr(found, "is_error", True) else "error")
                time.sleep(0.3)

        searcher = threading.Thread(target=search_all_along)
        searcher.start()
        try:
            for name, path in files.items():
                if name == "line.csv":
                    continue
                found = formats.by_filename(name)
                assert found is not None
                arguments = {
                    "collection_uid": collection.uid,
                    "title": name,
                    "content_base64": base64.b64encode(path.read_bytes()).decode(),
                    "mime_type": found.mime_types[0],
                    "background": False,
                }
                started = time.monotonic()
                (answer,) = call_all(base, token, [("upsert_item", arguments)])
                text = answer.content[0].text
                assert answer.is_error and ONE_LINE_REASONS[name] in text and "\n" not in text, (name, text)
                assert time.monotonic() - started < 60
            # 300 MB as base64 is refused at the door, before anything reads it.
            oversized = {**JSON_HEADERS, "Authorization": f"Bearer {token}"}
            body = rpc("tools/call", {"name": "upsert_item", "arguments": {"text": "x" * (5 * 1024 * 1024)}})
            assert httpx.post(f"{base}/mcp/", json=body, headers=oversized, timeout=60).status_code == 413

            console = Client()
            console.force_login(owner)
            for name, path in files.items():
                with path.open("rb") as handle:
                    page = console.post(
                        f"/console/collections/{collection.uid}/uploads",
                        {"files": [SimpleUploadedFile(name, handle.read())]},
                    ).content.decode()
                if name == "line.csv":
                    assert "line.csv: over the limit" in page
            deadline = time.monotonic() + 60 * len(IN_MEMORY)
            while IngestJob.objects.exclude(status__in=["failed", "complete"]).exists():
                assert time.monotonic() < deadline
                time.sleep(0.5)
            for job in IngestJob.objects.all():
                name = job.metadata["file_name"]
                assert job.status == "failed" and ONE_LINE_REASONS[name] in job.error, (name, job.error)
                assert "\n" not in job.error
        finally:
            stop.set()
            searcher.join(timeout=60)
            watch.stop()

    assert searches and set(searches) == {"ok"}
    assert watch.peak < 2 * GIB, (watch.peak, watch.largest)
    assert not Item.objects.filter(collection=collection).exists()
    assert not any(temporary.iterdir()), sorted(path.name for path in temporary.iterdir())
