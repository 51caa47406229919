"""Commands against a database that has no schema yet say so in one line, without a traceback."""

from __future__ import annotations

import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from tests.servers import ROOT, child_env, database_url

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@pytest.fixture
def empty_database_url() -> Iterator[str]:
    """A new, empty database on the tests' PostgreSQL server."""
    name = f"unmigrated_{secrets.token_hex(4)}"
    admin = database_url()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin.replace(f"/{connection.settings_dict['NAME']}", f"/{name}", 1)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.mark.parametrize(
    "command",
    [
        ["ingest", "docs", "--library", "L", "--collection", "c", "--no-progress"],
        ["evaluate", "--dataset", "/nowhere"],
        ["list_mcp_tokens"],
    ],
)
def test_a_command_on_a_database_without_the_schema_says_to_migrate(
    empty_database_url: str, tmp_path: Path, command: list[str]
) -> None:
    env = child_env(tmp_path, database=empty_database_url)
    done = subprocess.run(
        [sys.executable, "manage.py", *command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        "CommandError: the database schema is not up to date "
        f"({_migration_count()} migrations not applied): "
        "run `python manage.py migrate` first (`make run` does it)"
    )


def _migration_count() -> int:
    from django.db.migrations.loader import MigrationLoader

    return len(MigrationLoader(None, ignore_no_migrations=True).graph.nodes)
