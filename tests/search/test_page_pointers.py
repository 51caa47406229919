"""The pages a question points at. Pure."""

from __future__ import annotations

from mnemosyne.search.page_pointers import pages_named


def test_the_pages_a_question_points_at_are_read() -> None:
    assert pages_named("Which supplier is listed on the second page?") == {2}
    assert pages_named("Who signed the letter on page 14?") == {14}
    assert pages_named("Whose logo is printed on the title page?") == {1}
    assert pages_named("Summarise slides 3-5.") == {3, 4, 5}
    assert pages_named("How many pages does the appendix have?") == set()
