"""Every parse of an untrusted file runs in a child process: a small pool of warm parser processes
per process that parses (a server worker, an ingest command, a background worker).

A parser child starts clean (`python -m mnemosyne.ingestion.parser_child`, never forked from a
process holding threads, database connections or models), leaves the network (a network namespace
of its own where the kernel allows it, and Python's sockets refused in any case), and parses under
bounds the kernel enforces: its heap (RLIMIT_DATA, INGEST_PARSE_MEMORY_MB) and the CPU time of each
parse (RLIMIT_CPU, reset before each one: INGEST_PARSE_CPU_SECONDS, plus
INGEST_PARSE_CPU_SECONDS_PER_PAGE for each PDF page read by OCR). A parser that runs out of either,
crashes or hangs past a wall-clock guard is killed; that document fails with one line saying which
bound it met, the child is replaced, and no other parse — nor the process that asked — is affected.
A warm child that runs out of memory may owe it to what earlier parses left in its heap: the
document is tried once more in a fresh child before it fails.
Children idle for IDLE_SECONDS exit.

Only what the parsers need crosses: the bytes and file name in, the ParsedDocument (or the reason it
cannot be) out. The child reads no settings module and opens no database.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from django.conf import settings

from mnemosyne.ingestion.documents import DocumentRejected, ParsedDocument, UnreadableFile

logger = logging.getLogger(__name__)

# A parser child with nothing to do for this long exits (a new one starts when needed).
IDLE_SECONDS = 300.0
# The wall-clock guard of one parse: a multiple of its CPU budget (a parse waiting on nothing but
# the CPU takes no longer than its CPU time on a machine that is not overloaded).
WALL_FACTOR = 4.0
WALL_MARGIN_SECONDS = 60.0
_MIB = 1024 * 1024


class ParserFailed(UnreadableFile):
    """The parser met a bound (memory, CPU time), crashed or hung; the message says which."""


class OutOfMemory(ParserFailed):
    """The parser ran out of its memory budget."""


def out_of_memory(exc: BaseException | None) -> bool:
    """Whether a parse failed for want of memory: Python's MemoryError, or a native library's
    (`std::bad_alloc` from ONNX Runtime's OCR models, wrapped in whatever the parser raised)."""
    while exc is not None:
        if isinstance(exc, MemoryError) or "bad_alloc" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def limits() -> dict[str, Any]:
    """The settings a parser child works under (the parsers read them as Django settings)."""
    return {
        "OCR": settings.OCR,
        "OCR_DPI": settings.OCR_DPI,
        "INGEST_MAX_PAGES": settings.INGEST_MAX_PAGES,
        "INGEST_MAX_UNPACKED_BYTES": settings.INGEST_MAX_UNPACKED_BYTES,
        "INGEST_MAX_NESTING": settings.INGEST_MAX_NESTING,
        "INGEST_PARSE_MEMORY_MB": settings.INGEST_PARSE_MEMORY_MB,
        "INGEST_PARSE_CPU_SECONDS": settings.INGEST_PARSE_CPU_SECONDS,
        "INGEST_PARSE_CPU_SECONDS_PER_PAGE": settings.INGEST_PARSE_CPU_SECONDS_PER_PAGE,
    }


@dataclass
class _Child:
    process: subprocess.Popen[bytes]
    connection: Connection
    # Documents it has answered: a child that has parsed before holds what those parses left in
    # its heap (allocator arenas, fragments).
    answered: int = 0

    def alive(self) -> bool:
        return self.process.poll() is None


class ParserPool:
    """Up to `size` parser children, each parsing one document at a time."""

    def __init__(self, size: int, config: dict[str, Any]) -> None:
        self.config = config
        self._free: queue.LifoQueue[_Child | None] = queue.LifoQueue()
        for _ in range(size):
            self._free.put(None)  # a slot with no child yet: started when first needed

    def close(self) -> None:
        """Stop the children idle now; one still parsing exits when the pool is let go after its
        parse (its connection closes, and a child whose parent has gone stops)."""
        while True:
            try:
                child = self._free.get_nowait()
            except queue.Empty:
                return
            if child is not None:
                _stop(child)

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        child = self._free.get()
        try:
            if child is None or not child.alive():
                child = self._start()
            warm = child.answered > 0
            try:
                answer, child = self._ask(child, data, filename)
            except OutOfMemory:
                if not warm:
                    raise
                # Out of memory in a child that had parsed before: the document gets one more try
                # in a fresh child, whose heap is all its own.
                child = self._start()
                answer, child = self._ask(child, data, filename)
        finally:
            self._free.put(child)
        return answer

    def _start(self) -> _Child:
        parent_end, child_end = socket.socketpair()
        process = subprocess.Popen(
            [sys.executable, "-m", "mnemosyne.ingestion.parser_child", str(child_end.fileno())],
            pass_fds=[child_end.fileno()],
            stdin=subprocess.DEVNULL,
            env={**os.environ, CONFIG_VARIABLE: json.dumps(self.config)},
        )
        child_end.close()
        return _Child(process, Connection(parent_end.detach()))

    def _ask(self, child: _Child, data: bytes, filename: str) -> tuple[ParsedDocument, _Child | None]:
        budget = self.config["INGEST_PARSE_CPU_SECONDS"]
        deadline = time.monotonic() + budget * WALL_FACTOR + WALL_MARGIN_SECONDS
        try:
            child.connection.send((data, filename))
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not child.connection.poll(left):
                    _stop(child)
                    raise ParserFailed("the parser did not finish in time and was stopped")
                kind, *rest = child.connection.recv()
                if kind == "budget":  # a PDF's pages each get more CPU time: the guard follows
                    deadline += rest[0] * WALL_FACTOR
                    continue
                break
        except (EOFError, OSError, BrokenPipeError):
            reason = _death(child)
            raise ParserFailed(reason) from None
        if kind == "memory":
            _stop(child)
            raise OutOfMemory(
                f"the parser ran out of its memory budget ({self.config['INGEST_PARSE_MEMORY_MB']} MiB, "
                "INGEST_PARSE_MEMORY_MB)"
            )
        child.answered += 1
        if kind == "ok":
            return rest[0], child
        exception = UnreadableFile if kind == "unreadable" else DocumentRejected
        raise exception(rest[0])


def _death(child: _Child) -> str:
    """Why a child stopped answering, in a line."""
    try:
        code = child.process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        _stop(child)
        return "the parser stopped answering and was stopped"
    child.connection.close()
    if code == -signal.SIGXCPU or code == -signal.SIGKILL:
        return "the parser ran out of its CPU-time budget (INGEST_PARSE_CPU_SECONDS) and was stopped"
    if code in (-signal.SIGSEGV, -signal.SIGBUS, -signal.SIGABRT):
        return "the parser crashed on this file"
    return f"the parser stopped (exit status {code})"


def _stop(child: _Child) -> None:
    if child.alive():
        child.process.kill()
    child.process.wait(timeout=5)
    child.connection.close()


_pool: ParserPool | None = None
_pool_pid = 0
_pool_lock = threading.Lock()


def parse(data: bytes, filename: str) -> ParsedDocument:
    """The document in `data`, parsed in a parser child of this process's pool (a new pool when the
    settings its children work under have changed: say a test's)."""
    global _pool, _pool_pid
    config = limits()
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid() or _pool.config != config:
            if _pool is not None and _pool_pid == os.getpid():
                _pool.close()
            _pool, _pool_pid = ParserPool(settings.INGEST_PARSE_PROCESSES, config), os.getpid()
        pool = _pool
    return pool.parse(data, filename)


# The environment variable that hands a child its settings (JSON).
CONFIG_VARIABLE = "MNEMOSYNE_PARSER_SETTINGS"


def allow_more_cpu(seconds: float) -> None:
    """Give the parse in progress `seconds` more CPU time (a PDF, for each of its pages); nothing
    outside a parser child."""
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if soft == resource.RLIM_INFINITY or not _IN_CHILD:
        return
    extra = int(seconds) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (soft + extra, hard))
    _TELL_PARENT(extra)


_IN_CHILD = False
_TELL_PARENT: Any = lambda seconds: None  # noqa: E731


def enter_child(tell_parent: Any) -> None:
    """Mark this process a parser child (parser_child.serve): allow_more_cpu then raises the CPU
    limit and tells the parent, through `tell_parent(seconds)`, so its wall-clock guard follows."""
    global _IN_CHILD, _TELL_PARENT
    _IN_CHILD, _TELL_PARENT = True, tell_parent
