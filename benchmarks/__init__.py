"""Benchmarks of Mnemosyne's speed and memory targets: `python -m benchmarks` (docs/benchmarks.md).

corpus, results and report are pure (no Django, no model), so tests import them without a database.
"""
