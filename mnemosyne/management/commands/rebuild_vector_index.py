"""python manage.py rebuild_vector_index --m M --ef-construction E [--dimensions N] [--memory SIZE]

Rebuilds the HNSW index of each vector dimension (or one) with other build parameters
(mnemosyne/library/vector_indexes.py): concurrently beside the current index, then swapped in at
once, so searches and ingests go on meanwhile. A denser graph (say m 32, ef_construction 200) finds
more true nearest neighbours in a corpus of many near-copies, and costs a longer build and
costlier inserts (docs/benchmarks.md, "Near-duplicate copies"). Without --m and --ef-construction,
says what each index was built with.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from mnemosyne.lib.schema import require_current_schema
from mnemosyne.library import vector_indexes
from mnemosyne.library.errors import InvalidArgument


class Command(BaseCommand):
    help = (
        "Rebuild the HNSW vector index with other build parameters (m, ef_construction), searches going on."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--m", type=int, help="HNSW links per node (2–100; built with 16).")
        parser.add_argument(
            "--ef-construction",
            type=int,
            help="HNSW candidate list while building (at least twice m, up to 1000; built with 64).",
        )
        parser.add_argument("--dimensions", type=int, help="Only the index of vectors of this length.")
        parser.add_argument(
            "--memory", default="1GB", help="maintenance_work_mem for the build (default 1GB)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        require_current_schema()
        dimensions = vector_indexes.indexed_dimensions()
        if options["dimensions"] is not None:
            if options["dimensions"] not in dimensions:
                raise CommandError(f"no HNSW index for vectors of {options['dimensions']} dimensions")
            dimensions = [options["dimensions"]]
        if not dimensions:
            raise CommandError("no HNSW vector index yet: ingest something first")
        m, ef_construction = options["m"], options["ef_construction"]
        if m is None and ef_construction is None:
            for dimension in dimensions:
                built = vector_indexes.parameters(dimension)
                if built is not None:
                    self.stdout.write(
                        f"{dimension} dimensions: m {built.m}, ef_construction {built.ef_construction}"
                    )
            return
        if m is None or ef_construction is None:
            raise CommandError("give both --m and --ef-construction")
        wanted = vector_indexes.BuildParameters(m, ef_construction)
        try:
            for dimension in dimensions:
                self._rebuild(dimension, wanted, options["memory"])
        except InvalidArgument as exc:
            raise CommandError(str(exc)) from None
        except DatabaseError as exc:
            raise CommandError(
                f"the build failed ({str(exc).strip()}); the current index is still the one in use"
            ) from None

    def _rebuild(self, dimension: int, wanted: vector_indexes.BuildParameters, memory: str) -> None:
        """vector_indexes.rebuild, which checks the parameters and the memory size first."""
        started = time.monotonic()
        rebuilt = vector_indexes.rebuild(
            dimension,
            wanted,
            memory=memory,
            on_progress=lambda line: self._say(f"{dimension} dimensions: {line}"),
        )
        if rebuilt:
            self.stdout.write(
                f"{dimension} dimensions: rebuilt and in use, {time.monotonic() - started:.1f} s"
            )
        else:
            self.stdout.write(f"{dimension} dimensions: already built with these parameters")

    def _say(self, line: str) -> None:
        """A line written at once, also when the output is a pipe or a log file."""
        self.stdout.write(line)
        self.stdout.flush()
