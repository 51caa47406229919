"""Mnemosyne: a retrieval engine served over the Model Context Protocol."""

import os

# numpy's OpenBLAS runs a matrix product on a thread per core, which then spin: the diversity
# ordering's product of a search's head cost twice its CPU for the same time (docs/benchmarks.md).
# Every product Mnemosyne runs is one request's, small; set before anything imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from mnemosyne.lib import py311

# Before anything imports Django (see mnemosyne/lib/py311.py).
py311.install()
