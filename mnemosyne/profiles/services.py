"""Writes of a library's profile and synonym sets: each checked whole before anything is saved, and
said in words fit to print."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import transaction

from mnemosyne.library.models import Item, Library
from mnemosyne.profiles import query_rules
from mnemosyne.profiles.catalog import Profile, named, profile_of
from mnemosyne.profiles.models import SynonymSet
from mnemosyne.profiles.synonyms import Refused, SynonymSetRefused, compile_rules, parse

MAX_SET_BYTES = 1_000_000
_NAME = re.compile(r"^[\w][\w .-]{0,63}$")


@dataclass(frozen=True)
class SavedSet:
    synonym_set: SynonymSet
    created: bool
    # Lines that could not be read, left out; the rest was kept.
    refused: tuple[Refused, ...] = ()

    def describe(self) -> list[str]:
        verb = "created" if self.created else "replaced"
        lines = [
            f"{verb}: synonym set {self.synonym_set.name!r} of library {self.synonym_set.library.name!r} "
            f"({self.synonym_set.rule_count} rules)"
        ]
        lines += [f"refused {refused}" for refused in self.refused]
        return lines


def check_set_name(name: str) -> str:
    name = name.strip()
    if not _NAME.match(name):
        raise SynonymSetRefused(
            "a set's name is 1-64 letters, digits, spaces, '.', '-' or '_', starting with a letter or digit"
        )
    return name


@transaction.atomic
def save_synonym_set(*, library: Library, name: str, text: str, actor: str) -> SavedSet:
    """Create or replace the library's set `name` from `text` (the Solr / Elasticsearch format).
    Lines that cannot be read are left out and returned; a set with no rule left, one whose `=>`
    rules run in a circle, or one expanding a term too far is refused whole (SynonymSetRefused)."""
    name = check_set_name(name)
    if len(text.encode("utf-8")) > MAX_SET_BYTES:
        raise SynonymSetRefused(f"the set is larger than {MAX_SET_BYTES:,} bytes")
    parsed = parse(text)
    if not parsed.rules:
        reason = f": {parsed.refused[0]}" if parsed.refused else ""
        raise SynonymSetRefused(f"no rule could be read in the set{reason}")
    compile_rules(name, parsed.rules)
    refused_lines = {refused.line for refused in parsed.refused}
    kept = "\n".join(
        line for number, line in enumerate(text.splitlines(), start=1) if number not in refused_lines
    )
    row, created = SynonymSet.objects.update_or_create(
        library=library,
        name=name,
        defaults={"text": kept.strip() + "\n", "rule_count": len(parsed.rules), "updated_by": actor[:150]},
    )
    transaction.on_commit(query_rules.forget)
    return SavedSet(row, created, parsed.refused)


@transaction.atomic
def delete_synonym_set(*, library: Library, name: str) -> bool:
    deleted, _ = SynonymSet.objects.filter(library=library, name=name).delete()
    transaction.on_commit(query_rules.forget)
    return bool(deleted)


@dataclass(frozen=True)
class ProfileChange:
    library: Library
    before: Profile
    after: Profile
    # Documents read under the profile before: what they are, and their index, need a re-read.
    documents: int

    def describe(self) -> list[str]:
        if self.before == self.after:
            return [f"unchanged: library {self.library.name!r} already has the {self.after.name} profile"]
        lines = [
            f"changed: library {self.library.name!r} profile {self.before.name} → {self.after.name}",
            f"searches run from now: {self.after.purpose}",
        ]
        if self.documents and (
            self.before.readers != self.after.readers or self.before.versions != self.after.versions
        ):
            lines.append(
                f"its {self.documents} documents were read under {self.before.name}: what each is, and how "
                f"the index writes it, are read again by a re-read (`manage.py profile --library "
                f"{self.library.uid} --reread`), or at their next ingest or sync"
            )
        return lines


@transaction.atomic
def change_profile(*, library: Library, profile: str) -> ProfileChange:
    """Set the library's profile (its type); says what that changes (UnknownProfile for a name that
    is none)."""
    after = named(profile)
    locked = Library.objects.select_for_update().get(pk=library.pk)
    before = profile_of(locked.library_type)
    if locked.library_type != after.name:
        locked.library_type = after.name
        locked.save(update_fields=["library_type"])
        transaction.on_commit(query_rules.forget)
    documents = Item.objects.filter(collection__library=locked).count()
    return ProfileChange(locked, before, after, documents)
