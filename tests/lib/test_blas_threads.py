"""A process that imports mnemosyne first runs numpy's OpenBLAS on one thread, unless told otherwise."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# Fresh interpreters: only a process that starts with it shows what importing mnemosyne sets.
pytestmark = pytest.mark.slow

PROBE = (
    "import mnemosyne, os, numpy, threadpoolctl;"
    "pools = threadpoolctl.threadpool_info();"
    "print(os.environ['OPENBLAS_NUM_THREADS'],"
    " sorted({pool['num_threads'] for pool in pools if pool['user_api'] == 'blas'}))"
)


def probe(**environment: str) -> str:
    env = {key: value for key, value in os.environ.items() if key != "OPENBLAS_NUM_THREADS"}
    completed = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=env | environment,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return completed.stdout.strip()


def test_openblas_runs_on_one_thread() -> None:
    assert probe() == "1 [1]"


def test_an_operator_can_give_it_more() -> None:
    assert probe(OPENBLAS_NUM_THREADS="2") == "2 [2]"
