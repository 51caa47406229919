"""Servers a benchmark starts as processes of its own: a free port for each, and stopping them."""

from __future__ import annotations

import socket
import subprocess

STOP_SECONDS = 15


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, and SIGKILL when it has not ended after STOP_SECONDS."""
    process.terminate()
    try:
        process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
