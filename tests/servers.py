"""Servers the tests start for real: uvicorn serving mnemosyne.project.asgi:app against the test database."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


# Fake AWS credentials for a child process that talks to moto's S3 server: nothing from the
# developer's ~/.aws or an instance's metadata service.
FAKE_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "AKIAFAKEFORTESTS0000",
    "AWS_SECRET_ACCESS_KEY": "fake-secret-never-in-messages",
    "AWS_CONFIG_FILE": "/nonexistent",
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def create_bucket(endpoint_url: str, bucket: str) -> None:
    """A bucket on moto's server, made behind the server under test's back."""
    import boto3

    boto3.session.Session().client(
        "s3",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id=FAKE_AWS_ENV["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_AWS_ENV["AWS_SECRET_ACCESS_KEY"],
    ).create_bucket(Bucket=bucket)


def child_env(
    data_dir: Path, extra: dict[str, str] | None = None, *, database: str | None = None
) -> dict[str, str]:
    """The environment of a child process the tests start (manage.py, uvicorn, a worker): the test
    database (or `database`), `data_dir`, DEBUG, quiet logs, then `extra`."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "mnemosyne.project.settings",
        "DATABASE_URL": database or database_url(),
        "MNEMOSYNE_DATA_DIR": str(data_dir),
        "DEBUG": "true",
        "LOG_LEVEL": "warning",
        **(extra or {}),
    }


def run_manage(
    data_dir: Path, database_url: str, *args: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """`manage.py ARGS` in a child process on `database_url` and `data_dir`, its output captured."""
    environment = child_env(data_dir, env, database=database_url)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@contextlib.contextmanager
def first_choice_forgotten(env: dict[str, str] | None) -> Iterator[None]:
    """A server started under LIBRARY_ACCESS records it as the test database's first choice
    (access_policy.require_agreement), committed: once it has stopped, a database that had not
    chosen before is put back at never chosen, so the servers and tests that come after start where
    every test expects."""
    from access import access_policy
    from access.models import AccessPolicyState, MCPAuditEvent

    chosen = not env or "LIBRARY_ACCESS" not in env or AccessPolicyState.objects.exists()
    try:
        yield
    finally:
        if not chosen:
            AccessPolicyState.objects.all().delete()
            MCPAuditEvent.objects.filter(kind=MCPAuditEvent.Kind.POLICY_SWITCHED).delete()
            access_policy.forget()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def database_url() -> str:
    params = connection.settings_dict
    host = params["HOST"]
    if host.startswith("/"):
        return f"postgresql://{params['USER']}:@/{params['NAME']}?host={host}"
    return f"postgresql://{params['USER']}:{params['PASSWORD']}@{host}:{params['PORT']}/{params['NAME']}"


@contextlib.contextmanager
def uvicorn_server(
    data_dir: Path,
    *,
    env: dict[str, str] | None = None,
    workers: int = 1,
    log_name: str = "uvicorn",
    port: int | None = None,
) -> Iterator[str]:
    """`uvicorn mnemosyne.project.asgi:app` against the test database; yields its base URL once healthy."""
    port = port or free_port()
    environment = child_env(
        data_dir,
        {
            "MCP_REQUIRE_AUTH": "true",
            "DATABASE_CONN_MAX_AGE": "0",
            # Every test calls from 127.0.0.1: bad-token tests would add up to a throttled address
            # (test_throttles starts servers with the limit it tests).
            "MCP_AUTH_FAILURES_PER_MINUTE": "0",
            **(env or {}),
        },
    )
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "mnemosyne.project.asgi:app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    if workers > 1:
        command += ["--workers", str(workers)]
    log = data_dir / f"{log_name}-{port}.log"
    with first_choice_forgotten(env), log.open("wb") as log_file:
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=log_file, stderr=subprocess.STDOUT
        )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(process, base, log)
            yield base
        finally:
            stop(process)


def wait_healthy(process: subprocess.Popen[bytes], base: str, log: Path, *, seconds: float = 120) -> None:
    """Until `base` answers /mcp/health with 200; RuntimeError with the log if the process exits or
    `seconds` pass first."""
    deadline = time.monotonic() + seconds
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited:\n{log.read_text()}")
        try:
            if httpx.get(f"{base}/mcp/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server did not become healthy:\n{log.read_text()}")
        time.sleep(0.2)


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if it has not exited within 20 s."""
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@contextlib.contextmanager
def db_worker(
    data_dir: Path, *, log_name: str = "worker", env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """`manage.py db_worker` against the test database, polling every 0.2 s, until the block ends."""
    environment = child_env(data_dir, {"DATABASE_CONN_MAX_AGE": "0", **(env or {})})
    # --no-reload: with the autoreloader the worker would be a child we could not stop directly.
    command = [
        sys.executable,
        "manage.py",
        "db_worker",
        "--no-reload",
        "--no-startup-delay",
        "--interval",
        "0.2",
    ]
    with (data_dir / f"{log_name}-{free_port()}.log").open("wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT)
        try:
            yield process
        finally:
            stop(process)


@contextlib.contextmanager
def grpc_server(data_dir: Path, extra: dict[str, str] | None = None) -> Iterator[str]:
    """`manage.py serve_grpc` against the test database until the block ends: its host:port, once
    it answers. Call it where the test database is reachable (django_db_blocker.unblock())."""
    environment = child_env(data_dir, extra, database=database_url())
    target = f"127.0.0.1:{free_port()}"
    command = [sys.executable, "manage.py", "serve_grpc", "--port", target.rsplit(":", 1)[1]]
    with first_choice_forgotten(extra), (data_dir / "grpc.log").open("wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=log, stderr=log)
        try:
            with grpc.insecure_channel(target) as channel:
                grpc.channel_ready_future(channel).result(timeout=120)
            yield target
        finally:
            stop(process)
