"""A library's rules as a person reads them: its profile's synonym sets, instruction phrases,
identity readers and period rules, and its own synonym sets (the console, `manage.py profile`)."""

from __future__ import annotations

from dataclasses import dataclass

from mnemosyne.library.models import Library
from mnemosyne.profiles import catalog
from mnemosyne.profiles.models import SynonymSet
from mnemosyne.profiles.readers import READERS


@dataclass(frozen=True)
class RuleLine:
    kind: str  # "synonyms", "instructions", "identity", "periods", "code"
    name: str
    detail: str
    # Shipped with the profile, or the library's own (which its managers change).
    own: bool = False

    def __str__(self) -> str:
        return f"{self.kind}: {self.name} — {self.detail}"


def rule_lines(library: Library) -> list[RuleLine]:
    profile = catalog.profile_of(library.library_type)
    lines = [
        RuleLine(
            "synonyms", name, f"{len(catalog.glossary(name).expansions)} terms, shipped with the profile"
        )
        for name in profile.glossaries
    ]
    lines += [
        RuleLine("synonyms", row.name, f"{row.rule_count} rules, the library's own", own=True)
        for row in SynonymSet.objects.filter(library=library).order_by("name")
    ]
    for declared in catalog.declared_instructions(profile):
        lines.append(
            RuleLine("instructions", declared.name, f"{len(declared.phrases)} phrases a question may shed")
        )
    lines += [RuleLine("identity", name, READERS[name][0]) for name in profile.readers]
    if profile.versions:
        lines.append(
            RuleLine(
                "periods",
                "versions over time",
                "fiscal periods and a year name the versions that cover them; the latest is the newest",
            )
        )
    if profile.code:
        lines.append(RuleLine("code", "source files", "source code is read by its symbols"))
    return lines
