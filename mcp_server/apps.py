from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class McpServerConfig(AppConfig):
    name = "mcp_server"
    verbose_name = "MCP server"

    def ready(self) -> None:
        from mcp_server.auth import login_throttle, sign_in_audit  # noqa: F401  (connect their receivers)

        post_migrate.connect(_reconcile_policy, sender=self)


def _reconcile_policy(sender: Any, **kwargs: Any) -> None:
    """After `migrate` (which `serve` and `make run` run first): notice a switch of LIBRARY_ACCESS."""
    from mcp_server.auth.library_grants import reconcile_policy

    reconcile_policy()
