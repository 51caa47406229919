"""The gRPC server: ToolService, the standard health service and server reflection (grpcio).

ToolService answers under two names: `ToolService`, as the Clear AI design's own .proto declares it
(no package line), and `toolservice.ToolService`, as ours does (clients generated from it before
keep working). The messages are the same on the wire; only the path differs.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import grpc
from django.conf import settings
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from mcp_server.transports.grpc_api import tool_service_pb2 as pb
from mcp_server.transports.grpc_api import tool_service_pb2_grpc as pb_grpc
from mcp_server.transports.grpc_api.service import ToolService

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["ToolService"].full_name
# The design's .proto has no package: its clients call /ToolService/ListTools.
SEED_SERVICE_NAME = "ToolService"
WORKERS = 16


def build(address: str) -> tuple[grpc.Server, int]:
    """A server listening on `address` (host:port; port 0 picks one), not yet started; its port."""
    limit = settings.MCP_MAX_REQUEST_BODY_BYTES  # as over HTTP
    # Load shedding as over HTTP (transports/admission.py): at most the places and the queue in the
    # server at once; grpcio answers the next RESOURCE_EXHAUSTED at once.
    bound = settings.MCP_MAX_CALLS + settings.MCP_MAX_WAITING_CALLS if settings.MCP_MAX_CALLS > 0 else None
    server = grpc.server(
        ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="grpc"),
        options=[("grpc.max_receive_message_length", limit), ("grpc.max_send_message_length", limit)],
        maximum_concurrent_rpcs=bound,
    )
    service = ToolService()
    pb_grpc.add_ToolServiceServicer_to_server(service, server)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SEED_SERVICE_NAME, handlers(service)),)
    )
    checker = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checker, server)
    for name in ("", SERVICE_NAME, SEED_SERVICE_NAME):
        checker.set(name, health_pb2.HealthCheckResponse.SERVING)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME),
        server,
    )
    port = server.add_insecure_port(address)
    return server, port


def handlers(service: ToolService) -> dict[str, grpc.RpcMethodHandler]:
    return {
        "ListTools": grpc.unary_unary_rpc_method_handler(
            service.ListTools,
            request_deserializer=pb.Empty.FromString,
            response_serializer=pb.ToolList.SerializeToString,
        ),
        "CallTool": grpc.unary_unary_rpc_method_handler(
            service.CallTool,
            request_deserializer=pb.CallToolRequest.FromString,
            response_serializer=pb.CallToolResponse.SerializeToString,
        ),
    }
