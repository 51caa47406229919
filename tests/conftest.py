"""Shared fixtures: the real embedding model, a chunk store per test, a uvicorn server over HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from django.db import connection

from mnemosyne.ingestion.embedding import Embedder, get_embedder
from mnemosyne.ingestion.runner import RunSummary, ingest_paths
from mnemosyne.library.models import Collection, Library
from mnemosyne.library.services import ensure_collection, ensure_library

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return get_embedder()


@pytest.fixture(scope="session")
def shared_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory shared by the tests and the uvicorn server they talk to."""
    return tmp_path_factory.mktemp("data")


@pytest.fixture(autouse=True)
def _data_dir(settings, shared_data_dir: Path) -> Path:
    settings.MNEMOSYNE_DATA_DIR = shared_data_dir
    return shared_data_dir


def ingest_fixture_docs(
    embedder: Embedder,
    *,
    library: str = "Handbook",
    collection: str = "guides",
    library_type: str = "documentation",
) -> tuple[Library, Collection, RunSummary]:
    lib = ensure_library(name=library, library_type=library_type)
    col = ensure_collection(library=lib, name=collection)
    summary = ingest_paths(
        [FIXTURES / "docs"], collection=col, report=lambda line: None, embedder=embedder, progress=False
    )
    return lib, col, summary


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def database_url() -> str:
    params = connection.settings_dict
    host = params["HOST"]
    if host.startswith("/"):
        return f"postgresql://{params['USER']}:@/{params['NAME']}?host={host}"
    return f"postgresql://{params['USER']}:{params['PASSWORD']}@{host}:{params['PORT']}/{params['NAME']}"


@pytest.fixture(scope="session")
def live_server_url(django_db_setup, django_db_blocker, shared_data_dir: Path) -> Iterator[str]:
    """uvicorn serving mnemosyne.asgi:app against the test database, over real HTTP."""
    with django_db_blocker.unblock():
        url = database_url()
    port = _free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "mnemosyne.settings",
        "DATABASE_URL": url,
        "MNEMOSYNE_DATA_DIR": str(shared_data_dir),
        "DEBUG": "true",
        "MCP_REQUIRE_AUTH": "true",
        "LOG_LEVEL": "warning",
        "DATABASE_CONN_MAX_AGE": "0",
        "SEARCH_PARALLEL_LEGS": "true",
    }
    log = shared_data_dir / "uvicorn.log"
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "mnemosyne.asgi:app",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            cwd=ROOT,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"uvicorn exited:\n{log.read_text()}")
                try:
                    if httpx.get(f"{base}/mcp/health", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"uvicorn did not become healthy:\n{log.read_text()}")
                time.sleep(0.2)
            yield base
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
