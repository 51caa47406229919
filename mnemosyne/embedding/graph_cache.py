"""Graphs cached in EMBEDDING_CACHE_DIR (the exported float graph, its int8 form): each built once,
whatever the number of processes starting at once, and only ever seen whole."""

from __future__ import annotations

import fcntl
import logging
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

logger = logging.getLogger(__name__)


def built_once(target: Path, build: Callable[[Path], None], *, doing: str) -> Path:
    """`target`, built first by `build(target)` if it is not there yet, under one lock for the
    directory (another process may build it meanwhile). `doing` names the work in the log."""
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        with (target.parent / ".export.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not target.is_file():
                logger.info("%s the encoder graph to %s (once per model and version)", doing, target)
                build(target)
    return target


@contextmanager
def written_whole(target: Path) -> Iterator[Path]:
    """A temporary path beside `target` to write into, renamed to `target` when the block succeeds
    (a reader never sees half a graph) and removed when it fails."""
    with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".onnx.partial", delete=False) as handle:
        partial = Path(handle.name)
    try:
        yield partial
        # Readable like any cache file (the temporary file was made private: 0600).
        partial.chmod(0o644)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
