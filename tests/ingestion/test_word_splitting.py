"""Words OCR ran together are split again, and only those. Pure (SymSpell's dictionary from its wheel)."""

from __future__ import annotations

from mnemosyne.ingestion.word_splitting import space_positions, with_spaces


def test_run_together_words_are_split_and_real_words_are_left_whole() -> None:
    text = "Eachelementhas a name; pharmacokinetics and Intercontinental stay whole"
    spaced, lefts, rights = with_spaces(
        text, [float(i) for i in range(len(text))], [i + 1.0 for i in range(len(text))]
    )
    assert spaced == "Each element has a name; pharmacokinetics and Intercontinental stay whole"
    # The inserted spaces sit, without width, where the letter before them ends.
    assert len(lefts) == len(rights) == len(spaced)
    space = spaced.index(" element")
    assert lefts[space] == rights[space] == rights[space - 1]


def test_a_split_must_leave_only_words_and_no_stray_letters() -> None:
    assert space_positions("Theimportanceofretailsales") == [3, 13, 15, 21]
    assert space_positions("Xqzvbnmtrplk") == []  # no words in it
    assert space_positions("short words only") == []


def test_a_manuals_names_stay_whole() -> None:
    # Short compound names, CamelCase and identifiers with digits are names, not words run together.
    text = (
        "the namespace, acceptfont and whitelisted; FreeType, VisibleString, streebog256, GOST_hashfunction"
    )
    assert space_positions(text) == []
    assert space_positions("use thedefaultsizeinstead") == [7, 14, 18]
