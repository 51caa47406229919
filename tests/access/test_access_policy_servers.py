"""The sequence that once widened grants, played against real processes: a database under grants,
a person granted one library holding an unconfined token; `manage.py migrate` in a shell without
LIBRARY_ACCESS and in one with the old setting; servers restarted under grants — the token reaches
exactly what it did, over HTTP, stdio and gRPC. A server started with the other setting exits with
one line saying what is recorded and how to change it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from django.contrib.auth.models import User
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from access.library_access import Role
from access.library_grants import grant
from access.models import AccessPolicyState, LibraryGrant
from access.policy_switch import switch
from access.services import create_token
from mcp_server.transports.grpc_api import tool_service_pb2 as pb
from mcp_server.transports.grpc_api import tool_service_pb2_grpc as pb_grpc
from mnemosyne.library.services import ensure_library
from tests.mcp_server.clients import call_all, run
from tests.servers import ROOT, child_env, database_url, free_port, grpc_server, run_manage, uvicorn_server

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

GRANTS = {"LIBRARY_ACCESS": "grants"}
OPEN = {"LIBRARY_ACCESS": "open"}
DISAGREES = (
    "LIBRARY_ACCESS=open here, but this database's recorded access policy is grants: unset "
    "LIBRARY_ACCESS or set it to grants, or change the policy with `manage.py access_policy open`"
)


def shell(data_dir: Path, env: dict[str, str] | None) -> dict[str, str]:
    """A shell on the test database with `env`, or with no LIBRARY_ACCESS at all."""
    found = child_env(data_dir, env)
    if env is None:
        found.pop("LIBRARY_ACCESS", None)
    return found


def names_over_http(base: str, token: str) -> list[str]:
    (listed,) = call_all(base, token, [("list_libraries", {})])
    return sorted(library["name"] for library in listed.structured_content["libraries"])


def names_over_stdio(data_dir: Path, token: str) -> list[str]:
    async def scenario() -> list[str]:
        parameters = StdioServerParameters(
            command=sys.executable,
            args=[str(ROOT / "manage.py"), "mcp_stdio"],
            env=child_env(data_dir, {**GRANTS, "MNEMOSYNE_TOKEN": token}),
            cwd=str(ROOT),
        )
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.call_tool("list_libraries", {})
            return sorted(library["name"] for library in listed.structured_content["libraries"])

    return run(scenario)


def names_over_grpc(target: str, token: str) -> list[str]:
    stub = pb_grpc.ToolServiceStub(grpc.insecure_channel(target))
    answer = stub.CallTool(
        pb.CallToolRequest(toolName="list_libraries", parameters={}),
        metadata=[("authorization", f"Bearer {token}")],
        timeout=60,
    )
    assert answer.success, answer.message
    return sorted(library["name"] for library in json.loads(answer.output)["libraries"])


def test_migrate_without_the_setting_and_a_restart_under_grants_leave_every_reach_as_it_was(
    tmp_path: Path,
) -> None:
    handbook = ensure_library(name="Handbook", library_type="documentation")
    ensure_library(name="Personnel", library_type="documentation")
    switch("grants", actor="test")
    alice = User.objects.create(username="alice")
    grant(library=handbook, role=Role.READER, user=alice, actor="test")
    _, token = create_token(user=alice, name="laptop")  # unconfined, the default
    grants_before = list(LibraryGrant.objects.values_list("user__username", "library__name", "role"))

    for env in (None, OPEN):
        done = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--no-input"],
            cwd=ROOT,
            env=shell(tmp_path, env),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == f"note: the recorded access policy was left as it is. {DISAGREES}"
    assert AccessPolicyState.objects.get().policy == "grants"

    with uvicorn_server(tmp_path, env=GRANTS, log_name="after-migrate") as base:
        assert names_over_http(base, token) == ["Handbook"]
    assert names_over_stdio(tmp_path, token) == ["Handbook"]
    with grpc_server(tmp_path, GRANTS) as target:
        assert names_over_grpc(target, token) == ["Handbook"]
    assert list(LibraryGrant.objects.values_list("user__username", "library__name", "role")) == grants_before
    assert AccessPolicyState.objects.get().policy == "grants"


def test_every_server_started_with_the_other_setting_exits_in_one_line(tmp_path: Path) -> None:
    switch("grants", actor="test")
    user = User.objects.create(username="bob")
    grant(
        library=ensure_library(name="Handbook", library_type="documentation"),
        role=Role.READER,
        user=user,
        actor="t",
    )
    _, token = create_token(user=user, name="laptop")
    database = database_url()
    for command, env in (
        (["serve", "--no-worker", "--port", str(free_port())], OPEN),
        (["serve_grpc", "--port", str(free_port())], OPEN),
        (["mcp_stdio"], {**OPEN, "MNEMOSYNE_TOKEN": token}),
    ):
        done = run_manage(tmp_path, database, *command, env=env, timeout=300)
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        assert done.stderr.strip() == f"CommandError: {command[0]} not started: {DISAGREES}", command

    port = free_port()
    uvicorn = subprocess.run(
        [sys.executable, "-m", "uvicorn", "mnemosyne.project.asgi:app", "--port", str(port)],
        cwd=ROOT,
        env=child_env(tmp_path, {**OPEN, "LOG_LEVEL": "info"}, database=database),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert uvicorn.returncode != 0
    said = [line for line in uvicorn.stderr.splitlines() if "not started" in line]
    assert len(said) == 1 and said[0].endswith(f"uvicorn not started: {DISAGREES}"), uvicorn.stderr
    assert "Traceback" not in uvicorn.stderr
    assert AccessPolicyState.objects.get().policy == "grants"
