"""What each profile's rules do to real questions: under every profile, the text the vector legs
embed is the question less the instruction segments the profile declares, and nothing else — no
content word is ever lost. Over every question set there is: the SciFact claims and the filings
questions of ../shared/data, the manual questions (benchmarks/data), the questions of the FAQ files
Debian packages install and how-to and support questions written for this project
(tests/fixtures/questions).

`python -m benchmarks.question_corpus [--write-fixture]` prints, per set and profile, the questions
and how many changed; with --write-fixture it writes every change under each profile that declares
instructions to tests/fixtures/questions/changes.json (question ids and the segments removed, never
a benchmark's question text), which tests/profiles/test_question_corpus.py holds the rules to.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
QUESTIONS = ROOT / "tests" / "fixtures" / "questions"
FIXTURE = QUESTIONS / "changes.json"

_WORD = re.compile(r"\w+")


def shipped_rules(profile: Any) -> Any:
    """The rules a library of this profile runs with no set of its own."""
    from mnemosyne.profiles import catalog
    from mnemosyne.profiles.query_rules import QueryRules

    return QueryRules(
        profile=profile,
        profiles=(profile.name,),
        synonym_sets=tuple(catalog.glossary(name) for name in profile.glossaries),
        instructions=catalog.declared_instructions(profile),
    )


@dataclass(frozen=True)
class Change:
    question_id: str
    removed: tuple[str, ...]


@dataclass(frozen=True)
class Checked:
    questions: int
    changed: list[Change]
    # Questions whose embedded text lost a word that is not in a removed segment: must be none.
    lost: list[str]


def check(questions: Iterable[tuple[str, str]], rules: Any) -> Checked:
    """Each (id, question) prepared as a search would; what changed, and any word lost."""
    count = 0
    changed: list[Change] = []
    lost: list[str] = []
    for question_id, question in questions:
        count += 1
        prepared = rules.prepare(question)
        kept = rules.content(question)
        if not prepared.stripped:
            if kept != question:
                lost.append(question_id)
            continue
        changed.append(Change(question_id, prepared.stripped))
        asked = Counter(_WORD.findall(question))
        removed = Counter(word for segment in prepared.stripped for word in _WORD.findall(segment))
        if Counter(_WORD.findall(kept)) != asked - removed or removed - asked:
            lost.append(question_id)
    return Checked(count, changed, lost)


def _lines(path: Path, prefix: str) -> Iterator[tuple[str, str]]:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip() and not line.startswith("#"):
            yield f"{prefix}-{number}", line.strip()


def question_sets(shared: Path = SHARED) -> dict[str, list[tuple[str, str]]]:
    """Every set there is, by name: (id, question) pairs. The shared sets only where they are."""
    sets = {
        "how-to": list(_lines(QUESTIONS / "how-to.txt", "howto")),
        "debian-faqs": list(_lines(QUESTIONS / "debian-faqs.txt", "faq")),
        "manuals": [
            (f"manual-{number}", entry["question"])
            for number, entry in enumerate(
                json.loads((ROOT / "benchmarks" / "data" / "manual_questions.json").read_text())["questions"],
                1,
            )
        ],
    }
    scifact = shared / "scifact" / "queries.jsonl"
    if scifact.exists():
        sets["scifact"] = [
            (f"scifact-{row['_id']}", row["text"])
            for row in map(json.loads, scifact.read_text(encoding="utf-8").splitlines())
        ]
    filings = shared / "filings" / "questions.jsonl"
    if filings.exists():
        sets["filings"] = [
            (row["id"], row["question"])
            for row in map(json.loads, filings.read_text(encoding="utf-8").splitlines())
        ]
    return sets


def changes_by_profile(sets: dict[str, list[tuple[str, str]]]) -> dict[str, dict[str, Checked]]:
    from mnemosyne.profiles.catalog import PROFILES

    return {
        name: {set_name: check(questions, shipped_rules(profile)) for set_name, questions in sets.items()}
        for name, profile in PROFILES.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.question_corpus")
    parser.add_argument("--write-fixture", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    import mnemosyne  # noqa: F401  (Python 3.11 support for Django)

    django.setup()
    sets = question_sets()
    found = changes_by_profile(sets)
    print(f"{sum(len(questions) for questions in sets.values())} questions in {len(sets)} sets")
    print("| profile | " + " | ".join(f"{name} ({len(sets[name])})" for name in sets) + " | words lost |")
    print("|---|" + "---|" * (len(sets) + 1))
    for profile, by_set in found.items():
        cells = [str(len(checked.changed)) for checked in by_set.values()]
        lost = sum(len(checked.lost) for checked in by_set.values())
        print(f"| {profile} | " + " | ".join(cells) + f" | {lost} |")
    if args.write_fixture:
        fixture = {
            profile: {
                set_name: {change.question_id: list(change.removed) for change in checked.changed}
                for set_name, checked in by_set.items()
                if checked.changed
            }
            for profile, by_set in found.items()
            if any(checked.changed for checked in by_set.values())
        }
        FIXTURE.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"written: {FIXTURE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
