"""Shared fixtures: the real embedding model, a chunk store per test, a uvicorn server over HTTP;
and the two tiers.

A test is `slow` when a judge takes part — the real model, a server or any other process, a
browser, a client no one here wrote: marked by hand (`pytestmark = pytest.mark.slow`), or by using
one of the JUDGES fixtures (directly or through another). `make test-fast` runs the others
(`-m "not slow"`): they get the stand-in embedder (tests/stand_in_embedder.py) as the process's
model, and one that starts a process fails saying it belongs to the full tier. `make test` runs
both."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import override_settings

import mnemosyne.embedding
from access import access_policy
from mnemosyne.embedding import Embedder, get_embedder
from mnemosyne.embedding.sentence_transformer import verify_bundled_weights
from mnemosyne.ingestion import parser_processes
from mnemosyne.ingestion.documents import ParsedDocument
from mnemosyne.ingestion.outcomes import RunReport
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.models import Collection, Library
from mnemosyne.library.services import ensure_collection, ensure_library
from mnemosyne.profiles import query_rules
from tests.servers import uvicorn_server
from tests.stand_in_embedder import StandInEmbedder

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The servers and callers the MCP surface's, access's and the console's tests share.
pytest_plugins = ["tests.server_fixtures"]

# Fixtures that load the real model or start a server or a client (this file's and
# server_fixtures.py's): a test using one is slow.
JUDGES = frozenset(
    {
        "embedder",
        "torch_model",
        "live_server_url",
        "open_server_url",
        "configured_server_url",
        "identity_server_url",
        "oauth_server",
        "node_bin",
        # Module fixtures that start a server process of their own (set up before `_fast_tier`
        # could refuse it): test_throttles.py's uvicorn, test_grpc.py's serve_grpc.
        "limited_server_url",
        "grpc_target",
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if JUDGES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


class _NoProcesses(subprocess.Popen[Any]):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError(
            "a test of the fast tier started a process: mark it slow (pytest.mark.slow) — "
            "processes are the full tier's judges"
        )


@pytest.fixture(autouse=True)
def _fast_tier(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that is not slow embeds with the stand-in and starts no process: its documents are
    parsed in the test's own process (the parser children are the full tier's)."""
    if request.node.get_closest_marker("slow") is not None:
        return
    monkeypatch.setattr(mnemosyne.embedding, "_embedder", StandInEmbedder())
    monkeypatch.setattr(subprocess, "Popen", _NoProcesses)
    monkeypatch.setattr(parser_processes, "parse", _parsed_here)


def _parsed_here(data: bytes, filename: str) -> ParsedDocument:
    from mnemosyne.ingestion.parsing import parse_here

    return parse_here(data, filename=filename)


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return get_embedder()


@pytest.fixture(scope="session")
def torch_model() -> Any:
    """The bundled model on torch through sentence-transformers (weights verified): the reference
    the ONNX encoders are checked against (the embedder itself may have loaded without it)."""
    from mnemosyne.embedding.sentence_transformer import _sentence_transformer, bundled_model_dir

    model_dir = bundled_model_dir()
    verify_bundled_weights(model_dir)
    return _sentence_transformer(model_dir)


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
) -> tuple[Library, Collection, RunReport]:
    lib = ensure_library(name=library, library_type=library_type)
    col = ensure_collection(library=lib, name=collection)
    summary = ingest_paths(
        [FIXTURES / "docs"], collection=col, report=lambda line: None, embedder=embedder, progress=False
    )
    return lib, col, summary


@contextlib.contextmanager
def committed_for_the_module(django_db_blocker: Any, shared_data_dir: Path) -> Iterator[None]:
    """Rows a whole module's tests read, made once and committed (a search's legs read on
    connections of their own), then flushed as a transactional test's teardown would flush them.
    The module's tests are then plain `django_db` tests: what one of them writes is rolled back,
    so the next finds the module's rows as they were made."""
    with django_db_blocker.unblock(), override_settings(MNEMOSYNE_DATA_DIR=shared_data_dir):
        try:
            yield
        finally:
            call_command("flush", interactive=False, verbosity=0, reset_sequences=False)


@pytest.fixture(autouse=True)
def _read_afresh() -> None:
    """Each test reads the recorded access policy and the libraries' synonym sets afresh (the
    process caches each a few seconds)."""
    access_policy.forget()
    query_rules.forget()


@pytest.fixture(scope="session", autouse=True)
def _close_other_sessions_before_teardown(django_db_setup, django_db_blocker) -> Iterator[None]:
    """Search legs run in a thread pool whose threads keep their database connections; the test
    database can only be dropped once they are gone (this teardown runs before pytest-django's)."""
    yield
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture(scope="session")
def live_server_url(django_db_setup, django_db_blocker, shared_data_dir: Path) -> Iterator[str]:
    """uvicorn serving mnemosyne.project.asgi:app against the test database, over real HTTP."""
    with django_db_blocker.unblock(), uvicorn_server(shared_data_dir) as url:
        yield url
