"""The console's browser tests share one kind of server: uvicorn over real HTTP under
LIBRARY_ACCESS=grants, started once for each module that asks for it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.servers import uvicorn_server

# The console server's upload limit: the test PDF is 256 KB.
MAX_BYTES = 1_000_000


@pytest.fixture(scope="module")
def console_url(django_db_setup, django_db_blocker, tmp_path_factory: pytest.TempPathFactory) -> Any:
    data_dir = tmp_path_factory.mktemp("console")
    with (
        django_db_blocker.unblock(),
        uvicorn_server(
            data_dir,
            env={"LIBRARY_ACCESS": "grants", "INGEST_MAX_FILE_BYTES": str(MAX_BYTES)},
            log_name="console",
        ) as url,
    ):
        yield url, data_dir
