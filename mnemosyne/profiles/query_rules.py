"""The rules a search runs on its question, chosen by the libraries it reads — and only those.

A search confined to libraries of one profile runs that profile's rules; libraries of several
profiles share only the general mechanisms, so no domain rule fires on a library that did not
choose it. A library's own synonym set applies when every library searched carries it (the same
name and rules). What ran is said in `explain` (Prepared.fired, .stripped).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from mnemosyne.profiles import catalog, instructions, synonyms
from mnemosyne.profiles.catalog import GENERAL, Profile
from mnemosyne.profiles.models import SynonymSet

# Libraries' own sets are read again after this many seconds (a change made in this process
# counts at once: forget()).
SETS_SECONDS = 10.0


@dataclass(frozen=True)
class Prepared:
    """A question as the legs read it, and what the rules did to it."""

    question: str
    # What the full-text legs read: the question and what the synonym sets add.
    text: str
    # What the vector legs embed: the question less its declared instructions, and what the sets add.
    vector_text: str
    fired: tuple[synonyms.Fired, ...] = ()
    stripped: tuple[str, ...] = ()


@dataclass(frozen=True)
class QueryRules:
    profile: Profile = GENERAL
    # The profiles of the libraries searched (several: only what they share ran).
    profiles: tuple[str, ...] = ("general",)
    synonym_sets: tuple[synonyms.Compiled, ...] = ()
    instructions: tuple[instructions.Instructions, ...] = ()

    @property
    def versions(self) -> bool:
        return self.profile.versions

    def prepare(self, question: str) -> Prepared:
        text, fired = synonyms.expand(question, self.synonym_sets)
        stripped = instructions.strip(question, self.instructions)
        vector_text, _ = synonyms.expand(stripped.text, self.synonym_sets)
        return Prepared(question, text, vector_text, tuple(fired), stripped.removed)

    def content(self, question: str) -> str:
        """A question (the rest of it, inside named documents) less its declared instructions."""
        return instructions.strip(question, self.instructions).text

    def describe(self) -> list[str]:
        """What runs, a line each (explain, the playground)."""
        lines = [f"profile: {self.profile.name}"]
        if len(self.profiles) > 1:
            lines[0] += f" (the libraries searched are {', '.join(self.profiles)}: only what they share runs)"
        lines += [f"synonym set: {compiled.name}" for compiled in self.synonym_sets]
        lines += [f"instruction phrases: {len(declared.phrases)}" for declared in self.instructions]
        if self.versions:
            lines.append("period rules: fiscal periods, the latest version, a year names documents")
        return lines


@dataclass
class _Sets:
    read_at: float = 0.0
    # library id → its sets as (name, digest of the rules, compiled)
    by_library: dict[int, list[tuple[str, str, synonyms.Compiled]]] = field(default_factory=dict)


_cache = _Sets()
_compiled: dict[tuple[int, str], synonyms.Compiled] = {}
_lock = threading.Lock()


def rules_for(library_ids: Iterable[int], types: Iterable[str]) -> QueryRules:
    """The rules of a search reading these libraries (their ids and types)."""
    ids = sorted(set(library_ids))
    names = sorted(set(types)) or ["general"]
    profile = catalog.PROFILES.get(names[0], GENERAL) if len(names) == 1 else GENERAL
    shipped = tuple(catalog.glossary(name) for name in profile.glossaries)
    own = _shared_sets(ids)
    return QueryRules(
        profile=profile,
        profiles=tuple(names),
        synonym_sets=shipped + own,
        instructions=catalog.declared_instructions(profile),
    )


def _shared_sets(library_ids: list[int]) -> tuple[synonyms.Compiled, ...]:
    """The sets every one of these libraries carries (by name and rules)."""
    if not library_ids:
        return ()
    by_library = _sets_by_library()
    first = by_library.get(library_ids[0], [])
    if not first:
        return ()
    shared = []
    for name, digest, compiled in first:
        if all(
            any(other[:2] == (name, digest) for other in by_library.get(library_id, []))
            for library_id in library_ids[1:]
        ):
            shared.append(compiled)
    return tuple(shared)


def _sets_by_library() -> dict[int, list[tuple[str, str, synonyms.Compiled]]]:
    now = time.monotonic()
    if now - _cache.read_at < SETS_SECONDS:
        return _cache.by_library
    with _lock:
        if now - _cache.read_at < SETS_SECONDS:
            return _cache.by_library
        by_library: dict[int, list[tuple[str, str, synonyms.Compiled]]] = {}
        for set_id, library_id, name, text in SynonymSet.objects.values_list(
            "id", "library_id", "name", "text"
        ):
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
            key = (set_id, digest)
            compiled = _compiled.get(key)
            if compiled is None:
                compiled = _compiled[key] = compiled_set(name, text)
            by_library.setdefault(library_id, []).append((name, digest, compiled))
        _cache.by_library, _cache.read_at = by_library, time.monotonic()
    return _cache.by_library


def compiled_set(name: str, text: str) -> synonyms.Compiled:
    """A stored set's rules, compiled (its text was checked when it was saved)."""
    return synonyms.compile_rules(name, synonyms.parse(text).rules)


def forget() -> None:
    """Read the libraries' own sets afresh at the next search (after a change in this process)."""
    _cache.read_at = 0.0
