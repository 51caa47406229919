"""python manage.py serve_grpc [--host H] [--port P]

Serves the gRPC ToolService (mcp_server/transports/grpc_api/tool_service.proto) with grpcio on
MCP_GRPC_PORT (50051), beside the standard health service and server reflection, until
interrupted (SIGTERM or Ctrl-C: in-flight calls get a few seconds to finish).
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from access import access_policy
from mcp_server.transports.grpc_api.server import SERVICE_NAME, build
from mnemosyne.embedding import get_embedder
from mnemosyne.lib.garbage_collector import set_up_for_serving
from mnemosyne.lib.schema import require_current_schema

GRACE_SECONDS = 5.0


class Command(BaseCommand):
    help = "Serve the gRPC ToolService."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=settings.MCP_GRPC_PORT)

    def handle(self, *args: Any, **options: Any) -> None:
        require_current_schema()
        try:
            access_policy.require_agreement("serve_grpc")
        except access_policy.PolicyDisagreement as exc:
            raise CommandError(str(exc)) from None
        get_embedder()  # loaded before the first call, not during it
        set_up_for_serving()  # the collector stops scanning what was loaded, and runs less often
        address = f"{options['host']}:{options['port']}"
        try:
            server, port = build(address)
        except RuntimeError as exc:
            raise CommandError(f"cannot listen on {address}: {exc}") from None
        stopping = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stopping.set())
        server.start()
        self.stdout.write(
            f"Serving gRPC {SERVICE_NAME} on {options['host']}:{port} (health, reflection). Ctrl-C stops."
        )
        self.stdout.flush()
        stopping.wait()
        server.stop(GRACE_SECONDS).wait()
