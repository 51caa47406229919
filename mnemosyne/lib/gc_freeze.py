"""The heap a server process builds at startup, moved out of the cyclic garbage collector's reach.

A server loads Django, the SDK, the tokenizer and the model once, about 200,000 objects that live
as long as the process. CPython's collector scans them again at every full collection, and under
load a search's own short-lived objects trigger one every few seconds: at 50 clients the collector
took about 1.4 ms of CPU a search, 0.9 of it in full collections walking the startup heap.
`gc.freeze()` (CPython's own remedy for exactly this) moves everything alive at that moment into a
permanent generation the collector never scans; objects made later are collected as before
(docs/benchmarks.md, "The startup heap frozen").
"""

from __future__ import annotations

import gc

from prometheus_client import Gauge

FROZEN_OBJECTS = Gauge(
    "mnemosyne_frozen_objects",
    "Objects of the server's startup heap the cyclic garbage collector no longer scans.",
    multiprocess_mode="max",
)


def freeze_startup_heap() -> int:
    """Collect the startup's garbage, then freeze what is left; returns how many objects are frozen."""
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    FROZEN_OBJECTS.set(frozen)
    return frozen
