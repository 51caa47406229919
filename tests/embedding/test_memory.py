"""Returning freed heap memory to the system after a batch (glibc's malloc_trim)."""

from __future__ import annotations

import os
import platform

import pytest

from mnemosyne.embedding.memory import release_free_memory

pytestmark = [
    pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's"),
    pytest.mark.slow,
]


def resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_freed_heap_blocks_stop_counting_once_released() -> None:
    # 64 KiB blocks come from the heap (below the mmap threshold); the last one, kept, pins the
    # heap's top, so plain free() keeps the pages below it resident.
    blocks = [bytearray(os.urandom(16)) * 4096 for _ in range(2048)]
    keep = blocks.pop()
    before_free = resident_bytes()
    del blocks
    held = resident_bytes()
    assert release_free_memory() is True
    released = resident_bytes()
    assert held - released > (before_free - held) + 64 * 2**20
    assert len(keep) == 64 * 1024
