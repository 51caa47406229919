"""OpenTelemetry tracing, on when OTEL_TRACING=true: spans go to an OTLP/HTTP collector (Jaeger,
Tempo, an OpenTelemetry Collector) at OTEL_EXPORTER_OTLP_ENDPOINT, OpenTelemetry's own variable
(default http://localhost:4318), named by OTEL_SERVICE_NAME.

The MCP SDK already opens a span per request ("tools/call search", with the caller's trace context
from `_meta` when it sends one); ours add the search and its legs beneath it. Off, the API's
no-op tracer costs next to nothing.
"""

from __future__ import annotations

import threading

from django.conf import settings
from opentelemetry import trace

tracer = trace.get_tracer("mnemosyne")

_lock = threading.Lock()
_provider: object | None = None


def configure() -> None:
    """Install the exporting tracer provider in this process, once, when tracing is on."""
    global _provider
    if not settings.OTEL_TRACING:
        return
    with _lock:
        if _provider is not None:
            return
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": settings.OTEL_SERVICE_NAME}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
        _provider = provider


def shutdown() -> None:
    """Send the spans still queued (at the server's shutdown)."""
    global _provider
    with _lock:
        provider, _provider = _provider, None
    shutdown_provider = getattr(provider, "shutdown", None)
    if shutdown_provider is not None:
        shutdown_provider()
