"""An outage said once and its end once: a success ends it only if its work began after the outage
did (under load, a request that read the database just before it went away can finish after the
first failure, and must not end the outage it never saw). Pure (no database, no server)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import pytest

from mnemosyne.lib import outages
from mnemosyne.lib.outages import Dependency


@pytest.fixture(autouse=True)
def _no_outage() -> Iterator[None]:
    outages._outages.clear()
    yield
    outages._outages.clear()


def _said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == "mnemosyne.lib.outages"]


def test_a_success_begun_before_the_outage_does_not_end_it(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="mnemosyne.lib.outages")
    before = time.monotonic()
    outages.failed(Dependency.DATABASE, ConnectionError("gone"))
    outages.succeeded(Dependency.DATABASE, before)  # read just before, answered just after
    outages.failed(Dependency.DATABASE, ConnectionError("gone"))
    outages.succeeded(Dependency.DATABASE, time.monotonic())  # begun during the outage: it is over
    said = _said(caplog)
    assert len(said) == 2
    assert said[0].startswith("the database is unavailable: ConnectionError: gone")
    assert said[1].startswith("the database is available again") and "(2 failed requests)" in said[1]


def test_a_success_with_no_outage_says_nothing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="mnemosyne.lib.outages")
    outages.succeeded(Dependency.DATABASE, time.monotonic())
    assert _said(caplog) == []
