"""SIGTERM to a server on the embedded PostgreSQL stops that PostgreSQL too, with one worker or two,
and forgets holders that died without letting go."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.servers import ROOT, free_port

pytestmark = pytest.mark.slow  # starts processes


def serve_embedded(data_dir: Path, workers: int) -> tuple[subprocess.Popen[bytes], str]:
    """uvicorn on its own embedded PostgreSQL (no DATABASE_URL), once healthy."""
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "mnemosyne.project.settings",
            "MNEMOSYNE_DATA_DIR": str(data_dir),
            "DEBUG": "true",
            "LOG_LEVEL": "warning",
            "EMBEDDED_POSTGRES_SHARED_BUFFERS_MB": "128",
        }
    )
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "mnemosyne.project.asgi:app", "--port", str(port)]
    if workers > 1:
        command += ["--workers", str(workers)]
    log = (data_dir / "uvicorn.log").open("wb")
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while True:
        assert process.poll() is None, (data_dir / "uvicorn.log").read_text()
        try:
            if httpx.get(f"http://127.0.0.1:{port}/mcp/health", timeout=2).status_code == 200:
                return process, f"http://127.0.0.1:{port}"
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, (data_dir / "uvicorn.log").read_text()
        time.sleep(0.3)


def postmaster_pid(pgdata: Path) -> int | None:
    pid_file = pgdata / "postmaster.pid"
    return int(pid_file.read_text().splitlines()[0]) if pid_file.exists() else None


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_stops_the_embedded_postgres(tmp_path: Path, workers: int) -> None:
    pgdata = tmp_path / "pgdata"
    process, _ = serve_embedded(tmp_path, workers)
    postgres = postmaster_pid(pgdata)
    assert postgres is not None and psutil.pid_exists(postgres)
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=60)
    deadline = time.monotonic() + 30
    while psutil.pid_exists(postgres) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not psutil.pid_exists(postgres), (tmp_path / "uvicorn.log").read_text()
    assert json.loads((pgdata / ".handle_pids.json").read_text()) == []


def test_a_holder_killed_outright_is_forgotten_at_the_next_start(tmp_path: Path) -> None:
    process, _ = serve_embedded(tmp_path, 1)
    pgdata = tmp_path / "pgdata"
    process.kill()  # no lifespan, no exit handlers: its pid stays on the list
    process.wait(timeout=30)
    assert process.pid in json.loads((pgdata / ".handle_pids.json").read_text())
    again, _ = serve_embedded(tmp_path, 1)
    postgres = postmaster_pid(pgdata)
    assert process.pid not in json.loads((pgdata / ".handle_pids.json").read_text())
    again.send_signal(signal.SIGTERM)
    again.wait(timeout=60)
    deadline = time.monotonic() + 30
    while postgres is not None and psutil.pid_exists(postgres) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert postgres is not None and not psutil.pid_exists(postgres)
