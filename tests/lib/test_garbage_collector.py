"""A server's startup heap is frozen: the cyclic collector no longer scans it, still collects what
the process makes afterwards, and collects the young generation less often."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

# A fresh interpreter: freezing the test process's own heap would outlive the test.
PROBE = """
import gc, weakref
import mnemosyne
from mnemosyne.lib.garbage_collector import YOUNG_GENERATION_THRESHOLD, set_up_for_serving

class Node:
    pass

def cycle():
    first, second = Node(), Node()
    first.other, second.other = second, first
    return weakref.ref(first)

before = cycle()  # garbage already: the startup's collection frees it, nothing frozen holds it
kept = Node()
kept.itself = kept  # alive at startup: frozen
frozen = set_up_for_serving()
after = cycle()  # made later: collected as before
gc.collect()
print(frozen > 1000, before() is None, after() is None, gc.get_freeze_count() == frozen,
      all(kept is not item for item in gc.get_objects()),
      gc.get_threshold() == (YOUNG_GENERATION_THRESHOLD, 10, 10))
"""


@pytest.mark.slow
def test_the_startup_heap_is_frozen_and_later_garbage_still_collected() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    assert completed.stdout.split() == ["True"] * 6, completed.stderr


def test_the_server_froze_its_startup_heap(live_server_url: str) -> None:
    text = httpx.get(f"{live_server_url}/metrics").text
    frozen = [
        sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "mnemosyne_frozen_objects"
        for sample in family.samples
    ]
    # Django, the SDK, the tokenizer and the model: far more than a few thousand objects.
    assert frozen and frozen[0] > 50_000, frozen
