"""A benchmark process's surroundings: its log lines, and Django configured on a data directory
of its own (an embedded PostgreSQL and a filesystem chunk store apart from development data)."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import mnemosyne  # noqa: F401  (Python 3.11 support for Django; must come before Django)

ROOT = Path(__file__).resolve().parent.parent


def log(message: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def configure_django(data_dir: Path) -> None:
    """The environment first (settings read it once), then Django, then the schema."""
    os.environ["MNEMOSYNE_DATA_DIR"] = str(data_dir)
    # Production settings: with DEBUG on, Django keeps every query of a process in memory, which
    # would show up as growth in the ingest's peak RSS and as time in the search latencies.
    os.environ["DEBUG"] = "false"
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    os.environ["DJANGO_SETTINGS_MODULE"] = "mnemosyne.project.settings"
    os.environ.setdefault("LOG_LEVEL", "warning")
    # Every stage embeds its query, in this process and in the MCP server it starts: the same
    # queries run through several stages and at every index size, and a remembered vector would
    # spare whichever stage came later.
    os.environ["TUNING"] = ",".join(filter(None, [os.environ.get("TUNING", ""), "query_cache_size=0"]))
    # Always the benchmark's own embedded server and filesystem store, never a configured one.
    os.environ.pop("DATABASE_URL", None)
    os.environ["CHUNK_STORE"] = "filesystem"
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / ".gitignore").write_text("*\n")
    # The embedded server applies its settings (shared_buffers) from its next start: a process of
    # its own starts it once and, as its last user, stops it, so this run starts it configured.
    subprocess.run(
        [sys.executable, "-c", "import mnemosyne, django; django.setup()"],
        cwd=ROOT,
        check=True,
        env=os.environ,
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
