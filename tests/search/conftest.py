"""Fixtures for the search tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.json_server import QuietServer
from tests.search.rerank_server import RerankServer, make_handler


@pytest.fixture
def server() -> Iterator[RerankServer]:
    state = RerankServer(base="")
    httpd = QuietServer(("127.0.0.1", 0), make_handler(state))
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state
    state.release.set()
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)
