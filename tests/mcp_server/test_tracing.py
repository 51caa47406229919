"""OTEL_TRACING=true: a real uvicorn sends its spans over OTLP/HTTP to a collector (here a small
local receiver decoding the protobuf): the SDK's request span with ours beneath it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from mnemosyne.library.models import Collection, Library
from tests.mcp_server.clients import post, rpc
from tests.servers import uvicorn_server

# A real uvicorn process: the full tier.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


class Collector:
    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.services: set[str] = set()
        self.lock = threading.Lock()


@pytest.fixture
def collector() -> Iterator[tuple[str, Collector]]:
    state = Collector()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            with state.lock:
                for resource_spans in request.resource_spans:
                    for attribute in resource_spans.resource.attributes:
                        if attribute.key == "service.name":
                            state.services.add(attribute.value.string_value)
                    for scope_spans in resource_spans.scope_spans:
                        for span in scope_spans.spans:
                            state.spans.append(
                                {"name": span.name, "id": span.span_id, "parent": span.parent_span_id}
                            )
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", state
    server.shutdown()


def test_spans_reach_the_collector_with_ours_beneath_the_sdks(
    collector: tuple[str, Collector], shared_data_dir: Path, corpus: tuple[Library, Collection], token: str
) -> None:
    endpoint, state = collector
    env = {
        "OTEL_TRACING": "true",
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_SERVICE_NAME": "mnemosyne-under-test",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    with uvicorn_server(shared_data_dir, env=env, log_name="traced") as base:
        query = {"query": "backup and restore", "search_types": ["vector", "fulltext"]}
        assert post(base, rpc("tools/call", {"name": "search", "arguments": query}), token).status_code == 200
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with state.lock:
                names = {span["name"] for span in state.spans}
            if {"tools/call search", "mnemosyne.search", "mnemosyne.search.fulltext"} <= names:
                break
            time.sleep(0.2)
    with state.lock:
        spans = {span["name"]: span for span in state.spans}
    assert state.services == {"mnemosyne-under-test"}
    request, search = spans["tools/call search"], spans["mnemosyne.search"]
    assert search["parent"] == request["id"], "the search runs inside the SDK's request span"
    assert spans["mnemosyne.search.vector"]["parent"] == search["id"]
    assert spans["mnemosyne.search.fulltext"]["parent"] == search["id"], "a leg in another thread too"
