"""A new Source for a collection, its location checked as `add_source` and the console check it:
a directory or git working tree (made absolute), s3://bucket/prefix, or a website's start page or
sitemap. InvalidArgument says what is wrong in one line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from django.db import IntegrityError

from mnemosyne.ingestion.fetch import FetchFailed, check_url
from mnemosyne.ingestion.sync.s3_objects import parse_location
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import Collection, Source

MAX_PAGES = 100_000
MAX_DEPTH = 20


def kind_of(location: str, *, git: bool = False) -> str:
    if location.startswith(("http://", "https://")):
        return Source.Kind.WEB
    if location.startswith("s3://"):
        return Source.Kind.S3
    return Source.Kind.GIT if git else Source.Kind.DIRECTORY


def new_source(
    collection: Collection,
    location: str,
    *,
    git: bool = False,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    every_minutes: int | None = None,
    max_pages: int = 200,
    max_depth: int = 3,
    document: Mapping[str, str] | None = None,
) -> Source:
    """Create the source (not synced yet); InvalidArgument when the location or a limit is wrong,
    or the collection has that source already."""
    kind = kind_of(location, git=git)
    if kind == Source.Kind.S3:
        try:
            parse_location(location)
        except ValueError as exc:
            raise InvalidArgument(str(exc)) from None
    elif kind == Source.Kind.WEB:
        try:
            check_url(location)
        except FetchFailed as exc:
            raise InvalidArgument(str(exc)) from None
    else:
        location = str(Path(location).expanduser().resolve())
    if every_minutes is not None and every_minutes < 1:
        raise InvalidArgument("the sync interval must be at least 1 minute")
    if not 1 <= max_pages <= MAX_PAGES or not 0 <= max_depth <= MAX_DEPTH:
        raise InvalidArgument(
            f"a website's page limit must be 1-{MAX_PAGES} and its link depth 0-{MAX_DEPTH}"
        )
    try:
        return Source.objects.create(
            collection=collection,
            kind=kind,
            location=location,
            include=list(include),
            exclude=list(exclude),
            every_minutes=every_minutes,
            max_pages=max_pages,
            max_depth=max_depth,
            document=dict(document or {}),
        )
    except IntegrityError:
        raise InvalidArgument(f"{location} is already a source of that collection") from None
