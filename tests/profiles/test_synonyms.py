"""Synonym sets in the Solr / Elasticsearch format: read line by line, refused whole when they run
in a circle or expand a term too far, and what they add to a question. Pure."""

from __future__ import annotations

import pytest

from mnemosyne.profiles import catalog
from mnemosyne.profiles.synonyms import (
    MAX_EXPANSION,
    SynonymSetRefused,
    compile_rules,
    expand,
    parse,
    render,
)


def compiled(text: str) -> object:
    return compile_rules("test", parse(text).rules)


def test_equivalents_bring_each_other_and_a_one_way_rule_only_its_right_side() -> None:
    rules = compile_rules("kit", parse("laptop, notebook computer\nroa => net income, total assets\n").rules)
    text, fired = expand("Which laptop has the best battery?", [rules])
    assert text == "Which laptop has the best battery? (notebook computer)"
    assert [(f.set_name, f.matched, f.added) for f in fired] == [("kit", "laptop", ("notebook computer",))]
    assert expand("Is a notebook computer a laptop?", [rules])[1] == []  # both held already
    assert expand("What is net income?", [rules]) == ("What is net income?", [])  # one way only
    assert expand("ROA of the bank", [rules])[0] == "ROA of the bank (net income, total assets)"


def test_the_longest_term_matches_whole_words_only() -> None:
    rules = compile_rules(
        "t", parse("asset turnover => revenue\nfixed asset turnover => property and equipment\n").rules
    )
    assert expand("What was the fixed asset turnover?", [rules])[0] == (
        "What was the fixed asset turnover? (property and equipment)"
    )
    # "turnovers" is not "turnover", and "p&l" keeps its ampersand as one word.
    assert expand("asset turnovers", [rules])[1] == []
    pl = compile_rules("t", parse("p&l, profit and loss account\n").rules)
    assert expand("Where is the P&L?", [pl])[0] == "Where is the P&L? (profit and loss account)"


def test_lines_that_cannot_be_read_are_refused_one_by_one_and_the_rest_kept() -> None:
    parsed = parse("a, b\nc,,d\n=> e\nsolo\nf => g => h\n# comment\n\nok, fine  # trailing note\nx\\, y, z\n")
    # Terms are matched as words: a comma inside one ("x\\, y") is punctuation, like any other.
    assert [str(rule) for rule in parsed.rules] == ["a, b", "ok, fine", "x y, z"]
    assert [(r.line, r.reason) for r in parsed.refused] == [
        (2, "an empty term"),
        (3, "an empty term"),
        (4, "one term alone: nothing to be a synonym of (write 'a, b' or 'a => b')"),
        (5, "more than one '=>'"),
    ]
    assert parsed.rules[2].left == (("x", "y"), ("z",))


def test_a_circle_of_one_way_rules_is_refused_whole() -> None:
    with pytest.raises(SynonymSetRefused, match=r"run in a circle: a => b => a"):
        compiled("a => b\nb => a\n")
    with pytest.raises(SynonymSetRefused, match="run in a circle"):
        compiled("a, b\nb => c\nc => a\n")


def test_a_term_that_would_bring_too_many_is_refused_whole() -> None:
    # Two lines of equivalents sharing a term are one group of them.
    first = ", ".join(f"term{number}" for number in range(30))
    second = ", ".join(f"term{number}" for number in range(29, MAX_EXPANSION + 5))
    with pytest.raises(SynonymSetRefused, match=rf"'term0' would expand into {MAX_EXPANSION + 4} terms"):
        compiled(f"{first}\n{second}\n")


def test_rules_are_applied_once_not_followed_on() -> None:
    rules = compile_rules("t", parse("a => b\nb => c\n").rules)
    assert expand("a", [rules])[0] == "a (b)"


def test_a_set_exported_reads_back_the_same() -> None:
    text = "laptop, notebook computer\nroa, return on assets => net income, total assets\n"
    assert render(parse(text).rules) == text
    assert parse(render(parse(text).rules)).rules == parse(text).rules


def test_the_filings_glossary_is_read_whole_and_fires_only_on_its_terms() -> None:
    glossary = catalog.glossary("filings-glossary")
    assert expand("What was the quick ratio in the last balance sheet?", [glossary])[1]
    for ordinary in (
        "How do I round to the nearest integer in a spreadsheet formula?",
        "Which cell type has the highest current density?",
        "What is a ship's draught when fully loaded?",
    ):
        assert expand(ordinary, [glossary])[1] == []


def test_a_form_named_in_the_plural_brings_the_forms_own_name() -> None:
    # The name a cover prints ("Form 10-Q") is what identifies a filing's kind; "these 10-Qs" names it too.
    glossary = catalog.glossary("filings-glossary")
    text, fired = expand("What changed in these 10-Qs?", [glossary])
    assert text == "What changed in these 10-Qs? (10 q)"
    assert [(rule.matched, rule.added) for rule in fired] == [("10 qs", ("10 q",))]
