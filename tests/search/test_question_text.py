"""Questions as analysts write them: instructions set aside, the latest asked for, pages pointed at. Pure."""

from __future__ import annotations

import pytest

from mnemosyne.search.question_text import content, pages_named, wants_latest


@pytest.mark.parametrize(
    ("question", "searched"),
    [
        (
            "What is Amazon's FY2017 days payable outstanding (DPO)?Round your answer to two decimal places.",
            "What is Amazon's FY2017 days payable outstanding (DPO)?",
        ),
        (
            "What is the FY2018 capital expenditure amount (in USD millions) for 3M? Give a response to the "
            "question by relying on the details shown in the cash flow statement.",
            "What is the FY2018 capital expenditure amount for 3M? the cash flow statement.",
        ),
        (
            "What is total debt of COSTCO in FY 2021?Answer in millions.",
            "What is total debt of COSTCO in FY 2021?",
        ),
        (
            "You are a financial analyst. What was the gross margin of Acme in Q3 2023? "
            "Answer in percentage term, round to one decimal place.",
            "What was the gross margin of Acme in Q3 2023?",
        ),
    ],
)
def test_instructions_are_set_aside_and_their_content_kept(question: str, searched: str) -> None:
    assert content(question) == searched


def test_a_question_without_instructions_is_searched_as_it_is() -> None:
    claim = "Patients with common epithelial cancers are more likely to have an emergency event."
    assert content(claim) == claim
    assert content("Round to one decimal place.") == "Round to one decimal place."


def test_the_latest_is_wanted_only_when_no_period_is_named() -> None:
    assert wants_latest("What was Apple's gross margin in the most recent 10-Q?")
    assert wants_latest("For the latest quarter, what was iPhone revenue?")
    assert not wants_latest("What was Apple's gross margin in the Q2 2023 10-Q?")
    assert not wants_latest("What are Costco's current liabilities?")


def test_the_pages_a_question_points_at_are_read() -> None:
    assert pages_named("What date is mentioned on the second page?") == {2}
    assert pages_named("Format the date mentioned on page 14 as YYYY-MM-DD.") == {14}
    assert pages_named("What type of court is noted on the cover page?") == {1}
    assert pages_named("What is shown on pages 3-5?") == {3, 4, 5}
    assert pages_named("How many pages contain tables?") == set()
