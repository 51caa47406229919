"""python manage.py serve [--demo [--new-token]] [--host H] [--port P] [--workers N] [--no-worker]

N defaults to SERVE_WORKERS (one per core, at most 8).

Migrates, and with --demo ingests the project's docs/ into a demo library, keeps a development
token across restarts (access/dev_token.py) and prints client configs for it, then serves the
ASGI app with uvicorn until interrupted, with a background worker (`db_worker`, for queued
uploads and `ingest --background`) beside it unless --no-worker.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import uvicorn
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from access import access_policy, dev_token, library_access
from access.credentials import authenticate
from access.library_grants import grant
from access.models import MCPToken
from access.services import create_token, revoke_token
from access.users import ensure_token_owner
from mcp_server import client_configs
from mnemosyne.evaluation.demo_set import ensure_demo_set
from mnemosyne.ingestion.runner import ingest_paths
from mnemosyne.library.models import Library, LibraryType
from mnemosyne.library.services import ensure_collection, ensure_library

DEMO_LIBRARY = "Mnemosyne docs"
DEMO_COLLECTION = "docs"
DEV_USER = "dev"
DEV_TOKEN_NAME = "make-run"


class Command(BaseCommand):
    help = "Serve MCP over HTTP (streamable HTTP at /mcp/, SSE at /mcp/sse/)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--demo", action="store_true", help="Ingest docs/ and print a development token.")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=settings.PORT)
        parser.add_argument(
            "--workers",
            type=int,
            default=settings.SERVE_WORKERS,
            help="uvicorn worker processes (default SERVE_WORKERS: one per core, at most 8). "
            "Legacy SSE clients need --workers 1.",
        )
        parser.add_argument(
            "--no-worker",
            action="store_true",
            help="Do not start a background worker beside the server (run `manage.py db_worker` yourself).",
        )
        parser.add_argument(
            "--new-token",
            action="store_true",
            help="With --demo: revoke the kept development token and issue a new one.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        try:
            access_policy.require_agreement("serve")
        except access_policy.PolicyDisagreement as exc:
            raise CommandError(str(exc)) from None
        url = f"http://{options['host']}:{options['port']}/mcp/"
        if options["demo"]:
            self._ingest_demo()
            self._print_client_config(url, new_token=options["new_token"])
            self._print_console_sign_in(f"{url[:-4]}console/")
        self.stdout.write(
            f"Serving MCP at {url} (health: {url}health, admin: {url[:-4]}admin/, "
            f"console: {url[:-4]}console/). Ctrl-C stops."
        )
        # uvicorn re-raises SIGTERM after shutting down; as SystemExit it lets exit handlers run,
        # which stop the embedded PostgreSQL when this is its last user.
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
        if options["workers"] < 1:
            raise CommandError("--workers must be at least 1")
        if options["workers"] > 1:
            self._share_metrics()
            os.environ["MNEMOSYNE_WORKER_PROCESSES"] = str(options["workers"])  # the workers inherit it
            # Workers stopped by Ctrl-C leave the semaphores of their locks (tqdm's, torch's) to
            # multiprocessing's resource tracker, which removes them and warns that it did.
            quiet = "ignore:resource_tracker:UserWarning"
            os.environ["PYTHONWARNINGS"] = ",".join(filter(None, [os.environ.get("PYTHONWARNINGS"), quiet]))
            self.stdout.write(
                f"{options['workers']} worker processes (legacy SSE at /mcp/sse/ needs --workers 1)."
            )
        worker = None if options["no_worker"] else self._start_worker()
        try:
            self._serve(options)
        finally:
            if worker is not None:
                worker.terminate()
                try:
                    worker.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    worker.kill()

    def _start_worker(self) -> subprocess.Popen[bytes]:
        """A `db_worker` child: queued uploads (upsert_item) and `ingest --background` tasks run there."""
        manage = Path(settings.BASE_DIR) / "manage.py"
        return subprocess.Popen(
            [sys.executable, str(manage), "db_worker", "--no-reload"], cwd=settings.BASE_DIR
        )

    def _serve(self, options: dict[str, Any]) -> None:
        uvicorn.run(
            "mnemosyne.project.asgi:app",
            host=options["host"],
            port=options["port"],
            workers=options["workers"],
            # Our LOGGING (settings) formats uvicorn's records too, at LOG_LEVEL.
            log_config=None,
            log_level=settings.LOG_LEVEL.lower(),
            timeout_keep_alive=settings.HTTP_KEEP_ALIVE_SECONDS,
        )

    def _share_metrics(self) -> None:
        """Prometheus multiprocess mode: each worker writes its samples under one directory and
        /metrics adds them up, so a scrape sees every worker's counters, not whichever answered.
        The directory is emptied at each start (the client library's rule)."""
        directory = Path(
            os.environ.get("PROMETHEUS_MULTIPROC_DIR") or settings.MNEMOSYNE_DATA_DIR / "prometheus"
        )
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("*.db"):
            stale.unlink()
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(directory)  # the workers inherit it

    def _ingest_demo(self) -> None:
        library = ensure_library(
            name=DEMO_LIBRARY,
            library_type=LibraryType.DOCUMENTATION,
            description="The Mnemosyne project's own documentation.",
        )
        collection = ensure_collection(library=library, name=DEMO_COLLECTION)
        summary = ingest_paths(
            [settings.BASE_DIR / "docs", settings.BASE_DIR / "README.md"],
            collection=collection,
            report=lambda line: self.stdout.write(f"  {line}"),
        )
        self.stdout.write(f"Demo library {library.name!r} ({library.uid}): {summary.line()}")
        demo_set = ensure_demo_set(library)
        if demo_set is not None:
            self.stdout.write(
                f"Evaluation set {demo_set.name!r}: {demo_set.questions.count()} questions, "
                "to run in the console"
            )

    def _print_client_config(self, url: str, *, new_token: bool) -> None:
        raw = None if not settings.MCP_REQUIRE_AUTH else self._development_token(new_token=new_token)
        for line in client_configs.describe(url, raw):
            self.stdout.write(line)

    def _print_console_sign_in(self, console: str) -> None:
        """The development user's console password: the kept one while it still signs in, else a
        new one (kept in the data directory like the token)."""
        user, _ = ensure_token_owner(DEV_USER)
        if not user.is_staff:
            # Whoever runs the demo keeps it: staff read the activity and the evaluation sets.
            user.is_staff = True
            user.save(update_fields=["is_staff"])
        password = dev_token.read(dev_token.PASSWORD_NAME)
        if password is None or not user.check_password(password):
            password = secrets.token_urlsafe(12)
            user.set_password(password)
            user.save(update_fields=["password"])
            dev_token.write(password, dev_token.PASSWORD_NAME)
        self.stdout.write(
            f"Console: {console} (sign in as {DEV_USER!r} with password {password}; "
            f"kept in {dev_token.PASSWORD_NAME})"
        )

    def _development_token(self, *, new_token: bool) -> str:
        """The development token: the one kept in the data directory while it is valid, so the
        configs printed last time keep working; a new one (the old one revoked) when asked or when
        it is gone."""
        user, _ = ensure_token_owner(DEV_USER)
        if library_access.policy() == library_access.GRANTS:
            # Under grants the development user reads the demo library, as under open it reads all.
            demo = Library.objects.filter(name=DEMO_LIBRARY).first()
            if demo is not None:
                grant(library=demo, role=library_access.Role.READER, user=user, actor="serve --demo")
        kept = dev_token.read()
        if kept is not None and not new_token:
            found = authenticate(kept)
            if found.ok and found.token is not None and found.token.user_id == user.pk:
                self.stdout.write(
                    f"Development token (user {DEV_USER!r}, kept in {dev_token.PATH_NAME}): {kept}"
                )
                return kept
        for old in MCPToken.objects.filter(user=user, name=DEV_TOKEN_NAME):
            revoke_token(token=old, actor="serve --demo")
            old.name = f"{DEV_TOKEN_NAME}-{old.pk}"
            old.save(update_fields=["name"])
        _, raw = create_token(user=user, name=DEV_TOKEN_NAME, actor="serve --demo")
        dev_token.write(raw)
        self.stdout.write(f"Development token (user {DEV_USER!r}, new; kept in {dev_token.PATH_NAME}): {raw}")
        return raw
