"""Commands that read or write the libraries refuse, in one clear line, a database without the schema."""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor


def require_current_schema(using: str = DEFAULT_DB_ALIAS) -> None:
    """Raise CommandError when migrations are unapplied (a new data directory, or after an upgrade)."""
    executor = MigrationExecutor(connections[using])
    pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if pending:
        raise CommandError(
            f"the database schema is not up to date ({len(pending)} migrations not applied): "
            "run `python manage.py migrate` first (`make run` does it)"
        )
