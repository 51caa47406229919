"""Mnemosyne: a retrieval engine served over the Model Context Protocol."""

from mnemosyne.lib import py311

# Before anything imports Django (see mnemosyne/lib/py311.py).
py311.install()
