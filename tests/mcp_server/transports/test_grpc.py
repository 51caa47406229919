"""The gRPC ToolService over a real port: `manage.py serve_grpc` in a child process, a grpcio client;
every tool, the seed's error forms, auth refusals as gRPC statuses, health and reflection."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest
from django.contrib.auth.models import User
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from access.services import create_token
from mcp_server.tools.catalog import TOOL_SPECS
from mcp_server.transports.grpc_api import tool_service_pb2 as pb
from mcp_server.transports.grpc_api import tool_service_pb2_grpc as pb_grpc
from mnemosyne.library.models import Collection, Library
from tests.mcp_server.transports.test_http import metric
from tests.servers import ROOT, grpc_server

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def grpc_target(
    django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    data_dir = tmp_path_factory.mktemp("grpc")
    metrics_dir = data_dir / "metrics"
    metrics_dir.mkdir()
    extra = {
        "MCP_REQUIRE_AUTH": "true",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        "MCP_PUBLIC_BASE_URL": "https://mnemosyne.example.org",
    }
    with django_db_blocker.unblock(), grpc_server(data_dir, extra) as target:
        yield target, metrics_dir


def stub(target: str) -> pb_grpc.ToolServiceStub:
    return pb_grpc.ToolServiceStub(grpc.insecure_channel(target))


def bearer(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]


def call(target: str, tool: str, parameters: dict[str, str], token: str | None) -> pb.CallToolResponse:
    request = pb.CallToolRequest(toolName=tool, parameters=parameters)
    return stub(target).CallTool(request, metadata=bearer(token) if token else None, timeout=60)


def test_list_tools_gives_each_parameter_and_only_what_the_caller_may_call(
    grpc_target: tuple[str, Path], token: str
) -> None:
    target, _ = grpc_target
    everything = stub(target).ListTools(pb.Empty(), timeout=30)
    assert {tool.name for tool in everything.tools} == {spec.name for spec in TOOL_SPECS}
    search = next(tool for tool in everything.tools if tool.name == "search")
    assert search.parameters["query"].startswith("string, required:")
    assert search.parameters["limit"].startswith("integer, optional, default 20:")
    _, reader = create_token(user=User.objects.create(username="grpc-reader"), name="r")
    readable = stub(target).ListTools(pb.Empty(), metadata=bearer(reader), timeout=30)
    assert {"upsert_item", "delete_item"}.isdisjoint({tool.name for tool in readable.tools})


def test_every_tool_answers_with_its_structured_result(
    grpc_target: tuple[str, Path], corpus: tuple[Library, Collection], token: str
) -> None:
    target, metrics_dir = grpc_target
    library, collection = corpus
    found = call(target, "search", {"query": "restore the database from a dump", "limit": "5"}, token)
    assert found.success, found.message
    hit = json.loads(found.output)["results"][0]
    assert hit["item"]["title"] == "Backups"
    # Citations open in the console at this server's public address, over gRPC too.
    assert hit["url"] == f"https://mnemosyne.example.org/console/chunks/{hit['chunk_uid']}#passage"
    answers = {
        "get_chunk": call(target, "get_chunk", {"chunk_uid": hit["chunk_uid"], "context": "1"}, token),
        "list_libraries": call(target, "list_libraries", {}, token),
        "list_collections": call(target, "list_collections", {"library_uid": library.uid}, token),
        "list_items": call(target, "list_items", {"collection_uid": collection.uid}, token),
        "get_collection_config": call(target, "get_collection_config", {}, token),
        "list_topics": call(target, "list_topics", {"depth": "1"}, token),
        "list_concepts": call(target, "list_concepts", {"limit": "5"}, token),
        "get_concept_neighbors": call(target, "get_concept_neighbors", {"concept": "backup"}, token),
        "get_ingestion_status": call(
            target, "get_ingestion_status", {"status": "failed", "limit": "5"}, token
        ),
        "upsert_item": call(
            target,
            "upsert_item",
            {
                "collection_uid": collection.uid,
                "title": "Tides",
                "text": "# Tides\n\nHigh water.",
                "metadata": '{"a": 1}',
            },
            token,
        ),
    }
    for name, answer in answers.items():
        assert answer.success, (name, answer.message)
        assert isinstance(json.loads(answer.output), dict)
    created = json.loads(answers["upsert_item"].output)["item_uid"]
    dry = call(target, "delete_item", {"item_uid": created}, token)
    deleted = call(target, "delete_item", {"item_uid": created, "dry_run": "false"}, token)
    assert json.loads(dry.output)["deleted"] is False and json.loads(deleted.output)["deleted"] is True
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(metrics_dir))
    counted = generate_latest(registry).decode()
    assert metric(counted, "mcp_tool_invocations_total", tool="search", status="ok") >= 1
    assert metric(counted, "mcp_tool_invocations_total", tool="delete_item", status="ok") >= 2


@pytest.mark.parametrize(
    ("tool", "parameters", "message"),
    [
        ("search", {}, "Missing required parameter: query"),
        ("search", {"query": ""}, "Missing required parameter: query"),
        ("nope", {}, "Tool 'nope' not found"),
        ("search", {"query": "x", "limit": "abc"}, "limit: 'abc' is not an integer"),
        ("search", {"query": "x", "limit": "500"}, "limit"),
        ("search", {"query": "x", "rerank": "maybe"}, "rerank: must be true or false"),
        ("search", {"query": "x", "colour": "red"}, "colour: unknown argument"),
        ("search", {"query": "x", "search_types": "[vector"}, "search_types: must be JSON"),
        ("delete_item", {"item_uid": "itm_missing", "dry_run": "no"}, "dry_run: must be true or false"),
    ],
)
def test_bad_parameters_get_the_seeds_error_form(
    grpc_target: tuple[str, Path], token: str, tool: str, parameters: dict[str, str], message: str
) -> None:
    answer = call(grpc_target[0], tool, parameters, token)
    assert answer.success is False
    assert message in answer.message, answer.message
    assert "Traceback" not in answer.message


def test_refusals_are_grpc_statuses(grpc_target: tuple[str, Path]) -> None:
    target, _ = grpc_target
    _, reader = create_token(
        user=User.objects.create(username="grpc-limited"), name="l", rate_limit_per_minute=1
    )
    cases = {
        "no token": (None, "list_libraries"),
        "bad token": ("mnem_" + "x" * 43, "list_libraries"),
        "read token writing": (reader, "upsert_item"),
    }
    codes = {}
    for label, (credential, tool) in cases.items():
        with pytest.raises(grpc.RpcError) as raised:
            call(
                target,
                tool,
                {"collection_uid": "col_x", "title": "t", "text": "x"} if tool == "upsert_item" else {},
                credential,
            )
        codes[label] = raised.value.code()
    assert codes == {
        "no token": grpc.StatusCode.UNAUTHENTICATED,
        "bad token": grpc.StatusCode.UNAUTHENTICATED,
        "read token writing": grpc.StatusCode.PERMISSION_DENIED,
    }
    assert call(target, "list_libraries", {}, reader).success
    with pytest.raises(grpc.RpcError) as limited:
        call(target, "list_libraries", {}, reader)
    assert limited.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_a_ten_megabyte_message_is_refused(grpc_target: tuple[str, Path], token: str) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        call(grpc_target[0], "search", {"query": "x" * (10 * 2**20)}, token)
    assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_health_and_reflection_are_served(grpc_target: tuple[str, Path]) -> None:
    channel = grpc.insecure_channel(grpc_target[0])
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "toolservice.ToolService", "ToolService"):
        answer = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
    reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
    responses = reflection.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10
    )
    names = {service.name for response in responses for service in response.list_services_response.service}
    assert "toolservice.ToolService" in names and "grpc.health.v1.Health" in names


def test_a_client_of_the_designs_own_proto_without_a_package_works(
    grpc_target: tuple[str, Path], token: str, tmp_path: Path
) -> None:
    """The Clear AI design's .proto as written (no `package` line: its clients call
    /ToolService/…), compiled here with grpcio-tools and called through grpcio."""
    from grpc_tools import protoc

    seed = ROOT / "tests" / "fixtures" / "grpc" / "tool_service.proto"
    assert "package" not in seed.read_text()
    compiled = protoc.main(
        ["protoc", f"-I{seed.parent}", f"--python_out={tmp_path}", f"--grpc_python_out={tmp_path}", seed.name]
    )
    assert compiled == 0
    module_spec = importlib.util.spec_from_file_location("tool_service_pb2", tmp_path / "tool_service_pb2.py")
    assert module_spec is not None and module_spec.loader is not None
    seed_pb = importlib.util.module_from_spec(module_spec)
    sys.modules["tool_service_pb2"] = seed_pb
    try:
        module_spec.loader.exec_module(seed_pb)
        grpc_spec = importlib.util.spec_from_file_location(
            "tool_service_pb2_grpc", tmp_path / "tool_service_pb2_grpc.py"
        )
        assert grpc_spec is not None and grpc_spec.loader is not None
        seed_grpc = importlib.util.module_from_spec(grpc_spec)
        grpc_spec.loader.exec_module(seed_grpc)
        stub = seed_grpc.ToolServiceStub(grpc.insecure_channel(grpc_target[0]))
        listed = stub.ListTools(seed_pb.Empty(), metadata=bearer(token), timeout=30)
        called = stub.CallTool(
            seed_pb.CallToolRequest(toolName="list_libraries", parameters={}),
            metadata=bearer(token),
            timeout=60,
        )
        unknown = stub.CallTool(seed_pb.CallToolRequest(toolName="nope"), metadata=bearer(token), timeout=60)
    finally:
        sys.modules.pop("tool_service_pb2", None)
    assert {tool.name for tool in listed.tools} == {spec.name for spec in TOOL_SPECS}
    assert called.success and "libraries" in json.loads(called.output)
    assert (unknown.success, unknown.message) == (False, "Tool 'nope' not found")


@pytest.mark.slow
def test_calls_beyond_the_servers_bound_are_refused_resource_exhausted(
    django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory, token: str
) -> None:
    # One call in the server at once (MCP_MAX_CALLS 1, no queue): of calls made together, those that
    # find it taken are refused at once, as over HTTP's 503 busy.
    data_dir = tmp_path_factory.mktemp("grpc-bound")
    extra = {"MCP_REQUIRE_AUTH": "true", "MCP_MAX_CALLS": "1", "MCP_MAX_WAITING_CALLS": "0"}
    with django_db_blocker.unblock(), grpc_server(data_dir, extra) as target:

        def one(_: int) -> grpc.StatusCode:
            try:
                call(target, "search", {"query": "restore the database"}, token)
            except grpc.RpcError as exc:
                return exc.code()
            return grpc.StatusCode.OK

        with ThreadPoolExecutor(max_workers=20) as pool:
            codes = list(pool.map(one, range(20)))
        assert set(codes) <= {grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED}, codes
        assert grpc.StatusCode.OK in codes and grpc.StatusCode.RESOURCE_EXHAUSTED in codes, codes
        # Afterwards the place is free again.
        assert call(target, "list_libraries", {}, token).success
