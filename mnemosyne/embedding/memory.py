"""Handing memory the allocator keeps back to the operating system, after each embedding batch.

A forward pass allocates and frees tensors of up to tens of megabytes. glibc's malloc raises its
mmap threshold after such frees, so later ones come from the heap, and what they leave free stays
in the process: over thousands of batches the resident size creeps up with the corpus, though
nothing is held. `malloc_trim` returns those free pages; it takes about a millisecond per batch
of several seconds. Elsewhere than glibc this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import platform
from collections.abc import Callable

logger = logging.getLogger(__name__)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if platform.libc_ver()[0] != "glibc":
        return None
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        logger.debug("malloc_trim is not available from %s", name)
        return None
    return trim


def release_free_memory() -> bool:
    """Return the allocator's free pages to the system; False where that cannot be done."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
