"""A parser child's life (started by parser_processes.ParserPool as
`python -m mnemosyne.ingestion.parser_child FD`): leave the network, bound the heap, then parse what
the parent sends, each parse under its own CPU-time budget, until the parent goes or nothing comes
for parser_processes.IDLE_SECONDS."""

from __future__ import annotations

import gc
import json
import logging
import os
import resource
import sys
import warnings
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from mnemosyne.ingestion import parser_processes
from mnemosyne.ingestion.documents import DocumentRejected, UnreadableFile
from mnemosyne.ingestion.parser_processes import IDLE_SECONDS

_MIB = 1024 * 1024


def serve(connection: Connection, config: dict[str, Any]) -> None:
    """A parser child's life: leave the network, bound the heap, then parse what is sent, each
    parse under its own CPU-time budget, until the parent goes or nothing comes for IDLE_SECONDS."""
    _leave_network()
    memory = config["INGEST_PARSE_MEMORY_MB"] * _MIB
    resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
    # What a parser warns of is said in the document's reason, once, by the process that asked.
    logging.basicConfig(level=logging.ERROR)
    warnings.simplefilter("ignore")
    from django.conf import settings as child_settings

    import mnemosyne  # noqa: F401  (Python 3.11 support for Django, before Django is used)

    child_settings.configure(**config)
    from mnemosyne.ingestion import parsing

    parser_processes.enter_child(lambda seconds: connection.send(("budget", seconds)))

    while True:
        try:
            if not connection.poll(IDLE_SECONDS):
                return
            data, filename = connection.recv()
        except (EOFError, OSError):
            return
        _budget(config["INGEST_PARSE_CPU_SECONDS"])
        answer = _parsed(parsing.parse_here, data, filename)
        del data  # the document's bytes: not needed past its parse
        if answer is not None:
            try:
                connection.send(answer)
                continue
            except MemoryError:
                pass  # the answer did not fit in the budget: it is pickled whole before a byte is sent
        # Said outside the `except` that caught it: the failed parse's frames, held by its
        # traceback, hold what it had read, and even the few bytes of this answer may not fit
        # beside them.
        answer = None
        gc.collect()
        connection.send(("memory",))
        return  # its heap may be in pieces: a fresh child takes the next document


def _parsed(parse: Callable[..., Any], data: bytes, filename: str) -> tuple[Any, ...] | None:
    """The answer to send for one document; None when the parse ran out of memory."""
    try:
        return ("ok", parse(data, filename=filename))
    except DocumentRejected as exc:
        if parser_processes.out_of_memory(exc):
            return None
        return ("unreadable" if isinstance(exc, UnreadableFile) else "rejected", str(exc))
    except Exception as exc:
        if not parser_processes.out_of_memory(exc):
            raise
        return None


def _budget(seconds: float) -> None:
    """This parse's CPU time: past the soft limit the kernel ends the child with SIGXCPU (the hard
    limit is left alone: a child that has left its user namespace may not raise it again)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = int(used.ru_utime + used.ru_stime)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = spent + int(seconds) + 1
    resource.setrlimit(
        resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard)
    )


def _leave_network() -> None:
    """No connection out of a parser child: a network namespace of its own (only a loopback that is
    down) where the kernel lets it, and Python's sockets refused whatever it allows."""
    import ctypes
    import socket

    libc = ctypes.CDLL(None, use_errno=True)
    clone_newnet, clone_newuser = 0x40000000, 0x10000000
    if libc.unshare(clone_newnet) != 0:
        libc.unshare(clone_newuser | clone_newnet)

    class _NoSocket(socket.socket):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            raise OSError("a parser has no network")

    socket.socket = _NoSocket  # type: ignore[misc]


if __name__ == "__main__":
    serve(Connection(int(sys.argv[1])), json.loads(os.environ.pop(parser_processes.CONFIG_VARIABLE)))
