"""The profiles a library can choose, by its type: what a kind of document knows, as data and small
named readers. The core search and ingest run only what the library's profile names; the general
profile holds no domain rule at all.

A profile is:
- synonym sets shipped with it (data/<name>.txt, the Solr format, synonyms.py), beside any set the
  library's managers add (models.SynonymSet);
- instruction phrases a question may shed (data/<name>.txt, instructions.py);
- identity readers, in order (readers/): what a document is, read from its own pages;
- whether its documents are versions over time (periods.py): a fiscal period or a year in a
  question names the version that covers it, "the latest" the newest, "FY2019"/"Q3" are written
  out in the index;
- whether source code is read (the code profile).
"""

from __future__ import annotations

from dataclasses import dataclass

from mnemosyne.profiles import instructions, synonyms
from mnemosyne.profiles.shipped import shipped_text


@dataclass(frozen=True)
class Profile:
    name: str
    label: str
    purpose: str
    glossaries: tuple[str, ...] = ()
    instructions: str = ""
    readers: tuple[str, ...] = ("cover",)
    versions: bool = False
    code: bool = False


GENERAL = Profile(
    "general",
    "General",
    "Any documents: no domain rule; the general mechanisms only (pages and documents as ranking "
    "units, structure, tables, numbers as people write them, cover titles, dates and organisations).",
)
PROFILES: dict[str, Profile] = {
    profile.name: profile
    for profile in (
        GENERAL,
        Profile(
            "filings",
            "Filings and financial reports",
            "Annual and quarterly reports, filings, earnings releases: a financial glossary, analysts' "
            "instructions set aside, SEC covers and earnings releases read, fiscal periods and versions.",
            glossaries=("filings-glossary",),
            instructions="filings-instructions",
            readers=("sec_filing", "earnings_release", "cover"),
            versions=True,
        ),
        Profile(
            "research",
            "Research papers",
            "Papers: title, authors, year and DOI read from the first page.",
            readers=("paper", "cover"),
        ),
        Profile(
            "documentation",
            "Manuals and documentation",
            "Manuals and guides: the product and its version read from the title and first page.",
            readers=("manual", "cover"),
        ),
        Profile(
            "legal", "Legal", "Contracts, statutes, rulings: the general mechanisms (no rule of its own yet)."
        ),
        Profile("books", "Books", "Books: the general mechanisms."),
        Profile("notes", "Notes", "Notes: the general mechanisms."),
        Profile("code", "Code", "Source code read by its symbols, besides documents.", code=True),
    )
}


class UnknownProfile(ValueError):
    """A profile name that is none of PROFILES; the message lists them."""


def profile_of(library_type: str) -> Profile:
    """A library's profile, by its type (a type without a profile of its own: general)."""
    return PROFILES.get(library_type, GENERAL)


def named(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise UnknownProfile(
            f"unknown profile {name[:40]!r}; expected one of {', '.join(PROFILES)}"
        ) from None


def glossary(name: str) -> synonyms.Compiled:
    """A shipped synonym set, compiled (cached by shipped.py's reading once)."""
    return _compiled_glossary(name)


def declared_instructions(profile: Profile) -> tuple[instructions.Instructions, ...]:
    return (_compiled_instructions(profile.instructions),) if profile.instructions else ()


_GLOSSARIES: dict[str, synonyms.Compiled] = {}
_INSTRUCTIONS: dict[str, instructions.Instructions] = {}


def _compiled_glossary(name: str) -> synonyms.Compiled:
    found = _GLOSSARIES.get(name)
    if found is None:
        parsed = synonyms.parse(shipped_text(name))
        if parsed.refused:
            raise synonyms.SynonymSetRefused(f"shipped set {name}: {parsed.refused[0]}")
        found = _GLOSSARIES[name] = synonyms.compile_rules(name, parsed.rules)
    return found


def _compiled_instructions(name: str) -> instructions.Instructions:
    found = _INSTRUCTIONS.get(name)
    if found is None:
        found = _INSTRUCTIONS[name] = instructions.compile_phrases(name, shipped_text(name))
    return found
