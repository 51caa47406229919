"""Real questions, of many kinds, as each profile's rules leave them (benchmarks/question_corpus.py):
under no profile does a question lose a word that is not in an instruction segment the profile
declares; under the general profile nothing changes at all; the filings profile's changes are the
reviewed list in tests/fixtures/questions/changes.json, question by question. Over the sets held
here (how-to and support questions, FAQ questions, the manual questions) and, where
../shared/data is, the SciFact claims and the filings questions too."""

from __future__ import annotations

import json

from benchmarks.question_corpus import FIXTURE, changes_by_profile, question_sets


def test_no_profile_loses_a_word_and_only_declared_instructions_go() -> None:
    sets = question_sets()
    assert {"how-to", "debian-faqs", "manuals"} <= set(sets)
    assert sum(len(questions) for questions in sets.values()) >= 500
    reviewed = json.loads(FIXTURE.read_text(encoding="utf-8"))
    for profile, by_set in changes_by_profile(sets).items():
        for set_name, checked in by_set.items():
            assert checked.lost == [], (profile, set_name)
            assert checked.questions == len(sets[set_name])
            changed = {change.question_id: list(change.removed) for change in checked.changed}
            assert changed == reviewed.get(profile, {}).get(set_name, {}), (profile, set_name)
    assert set(reviewed) == {"filings"}  # the only profile that declares instructions
