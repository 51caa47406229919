"""CPython's cyclic garbage collector, set up for a server process once it has loaded what it serves.

A server loads Django, the SDK, the tokenizer and the model once, about 200,000 objects that live
as long as the process. The collector scanned them again at every full collection, and under load
a search's own short-lived objects trigger collections all the time: at 50 clients the collector
took about 1.4 ms of CPU a search (its own thread time), 0.9 of it in full collections walking the
startup heap. Two remedies of CPython's own (docs/benchmarks.md, "The collector set up for serving"):

- `gc.freeze()` moves everything alive at the end of startup into a permanent generation the
  collector never scans; objects made later are collected as before.
- The youngest generation is collected once YOUNG_GENERATION_THRESHOLD more container objects
  were made than freed, not CPython's 700: a search keeps thousands alive while it runs (rows,
  hits, the result), and at 700 the young generation was collected about once a search, walking
  the calls in flight. At 10,000 the collector's CPU went from 0.52 to 0.17 ms a search (frozen
  heap both). The older generations keep CPython's ratios (every 10 younger collections).
"""

from __future__ import annotations

import gc

from prometheus_client import Gauge

YOUNG_GENERATION_THRESHOLD = 10_000

FROZEN_OBJECTS = Gauge(
    "mnemosyne_frozen_objects",
    "Objects of the server's startup heap the cyclic garbage collector no longer scans.",
    multiprocess_mode="max",
)


def set_up_for_serving() -> int:
    """Collect the startup's garbage, freeze what is left, collect the young generation less often;
    returns how many objects are frozen."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, middle, old)
    frozen = gc.get_freeze_count()
    FROZEN_OBJECTS.set(frozen)
    return frozen
