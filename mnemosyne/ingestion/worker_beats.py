"""The background workers alive: each `manage.py db_worker` process (django-tasks-db's) writes a
heartbeat row every BEAT_SECONDS from a thread of its own, started when the app loads in that
process (mnemosyne/apps.py), and removes it when it exits. A row seen within ALIVE_SECONDS is a
worker alive — idle or working; a process killed outright leaves a row that simply goes stale.
Read by the console's ingestion view. The same thread rolls the query log's past days up and
keeps it to QUERY_LOG_DAYS (library/query_log.roll_up, prune), every PRUNE_SECONDS."""

from __future__ import annotations

import atexit
import logging
import os
import signal
import socket
import threading
import time
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

from mnemosyne.library import query_log
from mnemosyne.library.models import WorkerBeat

logger = logging.getLogger(__name__)

BEAT_SECONDS = 10.0
ALIVE_SECONDS = 30.0
PRUNE_SECONDS = 3600.0
_started = threading.Event()


def name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"[:200]


def start() -> None:
    """Beat from this process until it exits (once per process)."""
    if _started.is_set():
        return
    _started.set()
    stopped = threading.Event()
    thread = threading.Thread(target=_beat, args=(stopped,), name="worker-beat", daemon=True)
    thread.start()
    atexit.register(_stop, stopped, thread)


def alive(now: datetime | None = None) -> list[WorkerBeat]:
    seen = (now or timezone.now()) - timedelta(seconds=ALIVE_SECONDS)
    return list(WorkerBeat.objects.filter(seen_at__gte=seen).order_by("started_at"))


def _beat(stopped: threading.Event) -> None:
    me = name()
    # Alive once the worker can take tasks and be stopped: django-tasks-db's worker sets its signal
    # handlers as its loop starts (until then, a Ctrl-C interrupts whatever is loading).
    while signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        if stopped.wait(0.1):
            return
    pruned_at = -PRUNE_SECONDS
    while not stopped.is_set():
        try:
            WorkerBeat.objects.update_or_create(name=me, defaults={"seen_at": timezone.now()})
            if time.monotonic() - pruned_at >= PRUNE_SECONDS:
                query_log.roll_up()
                removed = query_log.prune()
                pruned_at = time.monotonic()
                if removed:
                    logger.info("the query log: %d rows older than QUERY_LOG_DAYS removed", removed)
        except Exception:  # the database away for a while: the next beat tries again
            logger.warning("the worker's heartbeat (or the query log's pruning) failed", exc_info=True)
        finally:
            connection.close()
        stopped.wait(BEAT_SECONDS)


def _stop(stopped: threading.Event, thread: threading.Thread) -> None:
    stopped.set()
    thread.join(timeout=5)
    try:
        WorkerBeat.objects.filter(name=name()).delete()
    except Exception:
        logger.warning("the worker's heartbeat row could not be removed", exc_info=True)
    finally:
        connection.close()
