"""Writes to the library tree. Keyword-only, typed, one transaction each."""

from __future__ import annotations

from django.db import transaction

from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import Collection, Library, LibraryType


def validate_library_type(library_type: str) -> str:
    if library_type not in LibraryType.values:
        raise InvalidArgument(
            f"unknown library_type {library_type!r}; expected one of {', '.join(LibraryType.values)}"
        )
    return library_type


@transaction.atomic
def ensure_library(*, name: str, library_type: str | None = None, description: str | None = None) -> Library:
    """Return the library called `name`, creating it when missing.

    An explicitly given type or description updates an existing library.
    """
    name = name.strip()
    if not name:
        raise InvalidArgument("a library needs a name")
    if library_type is not None:
        validate_library_type(library_type)
    library, created = Library.objects.select_for_update().get_or_create(
        name=name,
        defaults={
            "library_type": library_type or LibraryType.GENERAL,
            "description": description or "",
        },
    )
    if not created:
        changed = []
        if library_type is not None and library.library_type != library_type:
            library.library_type = library_type
            changed.append("library_type")
        if description is not None and library.description != description:
            library.description = description
            changed.append("description")
        if changed:
            library.save(update_fields=[*changed, "updated_at"])
    return library


@transaction.atomic
def ensure_collection(*, library: Library, name: str, description: str | None = None) -> Collection:
    name = name.strip()
    if not name:
        raise InvalidArgument("a collection needs a name")
    collection, created = Collection.objects.get_or_create(
        library=library, name=name, defaults={"description": description or ""}
    )
    if not created and description is not None and collection.description != description:
        collection.description = description
        collection.save(update_fields=["description", "updated_at"])
    return collection
