"""Mnemosyne: a retrieval engine served over the Model Context Protocol."""

from mnemosyne import py311

# Before anything imports Django (see mnemosyne/py311.py).
py311.install()
