"""Pages and documents fused into the chunk ranking, and numbers in the forms people type them. Pure."""

from __future__ import annotations

import datetime as dt

from mnemosyne.profiles import forms
from mnemosyne.profiles.catalog import PROFILES
from mnemosyne.profiles.periods import covered, match, named_periods
from mnemosyne.search.fusion import Fused
from mnemosyne.search.named_documents import MIN_CONFIDENCE, _Document, confidence, question_weight, score
from mnemosyne.search.units import Located, page_evidence, rescore
from mnemosyne.text.searchable_forms import document_form, query_form


def test_numbers_are_indexed_as_typed_with_and_without_separators_and_signs() -> None:
    assert document_form("Cash $5,794 and (1,234)") == "Cash $5794 and (1234) -1234"
    assert query_form("cash of 5,794 or (1,234)") == "cash of 5794 or (1234)"
    assert document_form("1,234.56 and 10,000,000") == "1234.56 and 10000000"
    # Lists of small numbers are left alone; fiscal periods are a profile's business.
    assert document_form("items 1,2,3") == "items 1,2,3"
    assert query_form("FY2019 Q3 results") == "FY2019 Q3 results"


def test_a_profile_of_versions_writes_fiscal_periods_out_and_the_general_one_does_not() -> None:
    filings, general = PROFILES["filings"], PROFILES["general"]
    assert "fiscal 2019" in forms.query_form("FY2019", versions=True)
    assert "fiscal 2019" in forms.document_form("FY19", filings)
    assert forms.query_form("Q3 results", versions=True) == "Q3 third quarter results"
    assert forms.document_form("Q3 results FY19", general) == "Q3 results FY19"
    assert forms.query_form("Q3 results", versions=False) == "Q3 results"


def test_a_page_whose_evidence_is_spread_over_chunks_outranks_one_loose_chunk() -> None:
    fused = [Fused(1, 0.8), Fused(2, 0.7), Fused(3, 0.7), Fused(4, 0.65)]
    located = {1: Located(10, 5), 2: Located(20, 8), 3: Located(20, 8), 4: Located(20, 8)}
    evidence = page_evidence({(10, 5): 3.0, (20, 8): 9.0})
    assert evidence == {(20, 8): 1.0, (10, 5): 1 / 3}
    ranked, added = rescore(fused, located, documents={}, document_confidence=0.0, pages=evidence)
    assert ranked[0].key in (2, 3) and added.page[2] == 1.0


def test_a_pages_evidence_is_credited_once_to_its_first_chunk() -> None:
    # Two chunks of page 6, one of page 8, all near in fused score; page 6 scores a little higher.
    fused = [Fused(1, 0.50), Fused(2, 0.45), Fused(3, 0.44), Fused(4, 0.30)]
    located = {1: Located(7, 6), 2: Located(7, 6), 3: Located(7, 8), 4: Located(7, 5, 6)}
    evidence = page_evidence({(7, 6): 1.0, (7, 8): 0.9, (7, 5): 0.2})
    ranked, added = rescore(fused, located, documents={}, document_confidence=0.0, pages=evidence)
    # Page 8's chunk is second: page 6's evidence lifts its first chunk, not its second as well.
    assert [entry.key for entry in ranked] == [1, 3, 2, 4]
    assert added.page == {1: 1.0, 2: 0.0, 3: 0.9, 4: 0.2}


def test_a_chunk_on_the_page_the_question_points_at_is_preferred() -> None:
    fused = [Fused(1, 0.8), Fused(2, 0.7)]
    located = {1: Located(10, 5), 2: Located(20, 1, 2)}
    ranked, _ = rescore(fused, located, documents={}, document_confidence=0.0, pages={}, pages_named={2})
    assert [entry.key for entry in ranked] == [2, 1]


def test_the_version_the_question_names_outranks_the_same_passage_of_another() -> None:
    fused = [Fused(1, 0.95), Fused(2, 0.93)]
    located = {1: Located(10, 3), 2: Located(11, 3)}
    ranked, added = rescore(fused, located, documents={11: 1.0, 10: 0.4}, document_confidence=1.0, pages={})
    assert [entry.key for entry in ranked] == [2, 1]
    assert added.document == {1: 0.4, 2: 1.0}


def test_asked_for_the_latest_the_newest_version_of_each_organisations_documents_wins() -> None:
    quarterly = covered(fiscal_year=None, fiscal_quarter=None, date=None, quarterly=True)
    documents = [
        _Document(1, frozenset({"appl"}), "Apple Inc.", "10-Q", dt.date(2023, 7, 1), quarterly),
        _Document(2, frozenset({"appl"}), "Apple Inc.", "10-Q", dt.date(2023, 4, 1), quarterly),
        _Document(3, frozenset({"10"}), "Intel Corporation", "10-Q", dt.date(2023, 9, 30), quarterly),
    ]
    weights = {"appl": 3.0, "10": 1.0}
    latest = score(documents, weights, [], latest=True)
    assert latest[1] > latest[2] > latest[3]
    assert score(documents, weights, [], latest=False) == {1: 0.75, 2: 0.75, 3: 0.25}
    assert score(documents, {}, [], latest=True) == {}


def test_asking_for_the_latest_names_a_version_as_surely_as_naming_its_period() -> None:
    # An organisation four filings share weighs little on its own; "the latest" or "Q3 2023" beside
    # it says which one, and the document scores count.
    shared = {"globex": 2.0}
    alone = question_weight(shared, [], latest=False, versions=True)
    assert confidence(alone) < MIN_CONFIDENCE
    latest = question_weight(shared, [], latest=True, versions=True)
    assert latest == question_weight(shared, [(3, 2023)], latest=False, versions=True)
    assert confidence(latest) >= MIN_CONFIDENCE


def test_a_period_is_matched_whole_by_the_fiscal_reading_first_then_the_calendar() -> None:
    apple_q3 = covered(fiscal_year=2023, fiscal_quarter=3, date=dt.date(2023, 7, 1), quarterly=True)
    apple_q2 = covered(fiscal_year=2023, fiscal_quarter=2, date=dt.date(2023, 4, 1), quarterly=True)
    annual = covered(fiscal_year=2019, fiscal_quarter=None, date=dt.date(2019, 12, 31), quarterly=False)
    assert named_periods("Apple's Q3 2023 10-Q") == [(3, 2023)]
    assert named_periods("in the second quarter of fiscal 2023") == [(2, 2023)]
    assert named_periods("from FY2017 to FY 2019") == [(None, 2017), (None, 2019)]
    assert match([(3, 2023)], apple_q3) == 1.0
    # The quarter ended July 1, 2023 is mostly the second calendar quarter: a weaker reading.
    assert match([(2, 2023)], apple_q3) == 0.8
    assert match([(1, 2023)], apple_q2) == 0.8
    assert match([(4, 2023)], apple_q2) == 0.5
    assert match([(None, 2019)], annual) == 1.0 and match([(None, 2018)], annual) == 0.0
