"""Helpers for the source tests: files on disk, a source added as `add_source` adds it, the items
it keeps."""

from __future__ import annotations

import io
from pathlib import Path

from django.core.management import call_command

from mnemosyne.library.models import Item, Source


def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def add(path: Path, *options: str) -> Source:
    return add_location(str(path.resolve()), *options)


def sources_of(source: Source) -> set[str]:
    return set(Item.objects.filter(collection=source.collection).values_list("source", flat=True))


def add_location(location: str, *options: str) -> Source:
    """`manage.py add_source LOCATION --library Docs --collection main OPTIONS…`; the source."""
    call_command(
        "add_source", location, "--library=Docs", "--collection=main", *options, stdout=io.StringIO()
    )
    return Source.objects.get(location=location)
