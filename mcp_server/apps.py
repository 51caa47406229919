from django.apps import AppConfig


class McpServerConfig(AppConfig):
    """The MCP surface as a Django app: its commands (mcp_stdio, serve_grpc, the MCP tokens'), the
    tokens' admin pages, and the migrations that created access's tables before their models moved
    to access/ (access/migrations/0001_initial.py takes them over; mcp_server keeps their history)."""

    name = "mcp_server"
    verbose_name = "MCP server"
