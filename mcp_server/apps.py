from django.apps import AppConfig


class McpServerConfig(AppConfig):
    name = "mcp_server"
    verbose_name = "MCP server"

    def ready(self) -> None:
        from mcp_server.auth import login_throttle  # noqa: F401  (connects its signal receiver)
