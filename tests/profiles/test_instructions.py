"""A question loses only whole segments its profile declares as instructions, never a content word;
under the general profile it loses nothing. Pure."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mnemosyne.profiles import catalog
from mnemosyne.profiles.instructions import InstructionsRefused, compile_phrases, strip

FILINGS = catalog.declared_instructions(catalog.PROFILES["filings"])


@pytest.mark.parametrize(
    ("question", "searched", "removed"),
    [
        (
            "What was the company's operating margin last year? Round your answer to one decimal place.",
            "What was the company's operating margin last year?",
            ("Round your answer to one decimal place.",),
        ),
        (
            "Round the result to two decimal places: what is the mean of the samples in the second trial?",
            "what is the mean of the samples in the second trial?",
            ("Round the result to two decimal places:",),
        ),
        (
            "You are an equity research analyst. How much cash did the firm hold at year end (in millions)?",
            "How much cash did the firm hold at year end?",
            ("You are an equity research analyst.", "(in millions)"),
        ),
        (
            "What did the group pay in dividends? Answer in USD billions.",
            "What did the group pay in dividends?",
            ("Answer in USD billions.",),
        ),
    ],
)
def test_declared_instructions_go_as_whole_segments(
    question: str, searched: str, removed: tuple[str, ...]
) -> None:
    stripped = strip(question, FILINGS)
    assert (stripped.text, stripped.removed) == (searched, removed)


@pytest.mark.parametrize(
    "question",
    [
        "How do I round to the nearest integer in a spreadsheet formula?",
        "Why does rounding to two decimal places give 0.1 + 0.2 = 0.30000000000000004 in Python?",
        "Should I answer in dollars or euros when invoicing a French client?",
        "What does a financial analyst do all day?",
        "Show your work badge: where do I find it in the app?",
    ],
)
def test_an_instruction_inside_a_sentence_is_content_and_stays(question: str) -> None:
    assert strip(question, FILINGS).text == question


def test_a_question_that_is_all_instruction_is_searched_whole() -> None:
    assert strip("Round to one decimal place.", FILINGS).text == "Round to one decimal place."


@given(st.text(max_size=300))
def test_the_general_profile_never_changes_a_question(question: str) -> None:
    assert strip(question, catalog.declared_instructions(catalog.GENERAL)).text == question


@given(
    st.lists(
        st.sampled_from(
            [
                "What was revenue?",
                " Round your answer to two decimal places.",
                " (in USD millions)",
                " and the margin",
                ": net of tax",
                " You are a financial analyst.",
                "\n",
                " 3.5",
                " Answer in percent.",
            ]
        ),
        min_size=1,
        max_size=8,
    )
)
def test_what_is_left_is_the_question_less_the_segments_removed(parts: list[str]) -> None:
    question = "".join(parts)
    stripped = strip(question, FILINGS)
    if not stripped.removed:
        assert stripped.text == question
        return
    kept, asked = _words(stripped.text), _words(question)
    # Every word kept is the question's, in its order; the words gone are the removed segments'.
    remaining = iter(asked)
    assert all(word in remaining for word in kept)
    assert Counter(asked) == Counter(kept) + Counter(
        word for segment in stripped.removed for word in _words(segment)
    )


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


def test_a_phrase_that_cannot_be_read_is_refused_with_its_line() -> None:
    with pytest.raises(
        InstructionsRefused, match=r"mine, line 2: an opening bracket without its closing one"
    ):
        compile_phrases("mine", "round to {number} places\nanswer in (dollars|euros\n")
    with pytest.raises(InstructionsRefused, match=r"only in \{number\}"):
        compile_phrases("mine", "answer in {unit}")
