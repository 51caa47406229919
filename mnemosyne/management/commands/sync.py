"""python manage.py sync [SOURCE_UID …] [--watch]"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from mnemosyne.ingestion.sync.listings import SourceUnavailable
from mnemosyne.ingestion.sync.runs import sync_source
from mnemosyne.lib.schema import require_current_schema
from mnemosyne.library.models import Source

# A change is synced once the source has been quiet this long (an editor saves in several writes).
QUIET_SECONDS = 0.5


class Command(BaseCommand):
    help = "Sync sources (all, or those named): ingest what is new or changed, rename, delete what is gone."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "sources", nargs="*", metavar="SOURCE_UID", help="Sources to sync (default: all)."
        )
        parser.add_argument(
            "--watch",
            action="store_true",
            help="Then keep watching them and sync each as soon as it changes (until interrupted).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        require_current_schema()
        sources = self._sources(options["sources"])
        failed = 0
        for source in sources:
            failed += not self._sync(source)
        if options["watch"]:
            self._watch(sources)
        elif failed:
            raise CommandError(f"{failed} source(s) could not be synced")

    def _sources(self, uids: Sequence[str]) -> list[Source]:
        queryset = Source.objects.select_related("collection__library").order_by("id")
        if not uids:
            found = list(queryset)
            if not found:
                raise CommandError("no sources yet; add one with `python manage.py add_source`")
            return found
        found = list(queryset.filter(uid__in=uids))
        missing = sorted(set(uids) - {source.uid for source in found})
        if missing:
            raise CommandError(f"no source with uid {', '.join(missing)}")
        return found

    def _sync(self, source: Source) -> bool:
        started = time.perf_counter()
        try:
            result = sync_source(source, report=lambda line: self.stdout.write(f"  {line}"))
        except SourceUnavailable as exc:
            self.stderr.write(f"{source.uid} {source.location}: cannot sync: {exc}")
            return False
        elapsed = time.perf_counter() - started
        self.stdout.write(f"{source.uid} {source.location}: {result.line()} ({elapsed:.2f} s)")
        return True

    def _watch(self, sources: list[Source]) -> None:
        """watchdog on each source's directory; a source that changed is synced once it is quiet."""
        changed: dict[int, float] = {}
        lock = threading.Lock()
        observer = Observer()
        for source in sources:
            location = Path(source.location)
            if not location.is_dir():
                self.stderr.write(f"{source.uid}: {location} is not a directory; not watched")
                continue
            observer.schedule(_Changes(source.pk, changed, lock), str(location), recursive=True)
        # Ctrl-C or SIGTERM stops it, even when started with SIGINT ignored (a background job).
        stop = threading.Event()
        for stopping in (signal.SIGINT, signal.SIGTERM):
            signal.signal(stopping, lambda signum, frame: stop.set())
        observer.start()
        self.stdout.write("Watching for changes (Ctrl-C stops).")
        by_pk = {source.pk: source for source in sources}
        try:
            while not stop.wait(0.1):
                now = time.monotonic()
                with lock:
                    due = [pk for pk, last in changed.items() if now - last >= QUIET_SECONDS]
                    for pk in due:
                        del changed[pk]
                for pk in due:
                    self._sync(Source.objects.select_related("collection__library").get(pk=by_pk[pk].pk))
        finally:
            observer.stop()
            observer.join()
        self.stdout.write("Stopped watching.")


class _Changes(FileSystemEventHandler):
    def __init__(self, source_pk: int, changed: dict[int, float], lock: threading.Lock) -> None:
        self.source_pk, self.changed, self.lock = source_pk, changed, lock

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        with self.lock:
            self.changed[self.source_pk] = time.monotonic()
