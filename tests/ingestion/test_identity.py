"""What a document is, read from its cover by the readers its library's profile names, or given by a
person. Pure."""

from __future__ import annotations

import datetime as dt

import pytest

from mnemosyne.ingestion.document_identity import identify
from mnemosyne.ingestion.documents import ParsedDocument
from mnemosyne.profiles.catalog import PROFILES
from mnemosyne.profiles.identity import (
    InvalidIdentity,
    document_line,
    identity_words,
    parse_given,
    with_given,
)

FILINGS, DOCUMENTATION = PROFILES["filings"], PROFILES["documentation"]


def document(
    text: str, *, title: str = "0000320193-23-000077", pages: tuple[int, ...] = ()
) -> ParsedDocument:
    return ParsedDocument(title=title, item_type="pdf", text=text, markdown=False, page_starts=pages)


QUARTERLY_COVER = """UNITED STATES SECURITIES AND EXCHANGE COMMISSION

FORM 10-Q

☒ QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934

For the quarterly period ended July 1, 2023

Commission File Number: 001-36743

Apple Inc.

(Exact name of Registrant as specified in its charter)

Title of each class Trading symbol(s) Common Stock AAPL The Nasdaq Stock Market LLC
"""
STATEMENT = """CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS (In millions)
|  | Three Months Ended July 1, 2023 | Nine Months Ended July 1, 2023 |
|---|---|---|
| Net sales | 81,797 | 288,709 |
"""


def test_a_quarterly_report_knows_its_company_symbol_form_and_fiscal_quarter() -> None:
    found = identify(document(QUARTERLY_COVER + "\n\n" + STATEMENT), profile=FILINGS)
    assert found.organisation == "Apple Inc."
    assert found.ticker == "AAPL"
    assert found.doc_type == "10-Q"
    assert found.date == dt.date(2023, 7, 1)
    # Nine months to the period's end: the third quarter; its fiscal year ends three months on.
    assert (found.fiscal_quarter, found.fiscal_year, found.period) == (3, 2023, "Q3 FY2023")
    assert found.title == "Apple Inc. Form 10-Q for the quarter ended July 1, 2023"


def test_a_first_quarter_late_in_the_calendar_year_belongs_to_the_next_fiscal_year() -> None:
    cover = QUARTERLY_COVER.replace("July 1, 2023", "September 30, 2022")
    statement = "| | Three Months Ended September 30, 2022 | |\n|---|---|---|\n| Revenue | 50,122 | |"
    found = identify(document(cover + "\n\n" + statement), profile=FILINGS)
    assert (found.fiscal_quarter, found.fiscal_year) == (1, 2023)


def test_an_annual_report_in_capitals_and_without_a_symbol_table() -> None:
    cover = """FORM 10-K

ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934

For the fiscal year ended December 31, 2017

Commission File No. 000-22513

____________________________________ AMAZON.COM, INC.

(Exact name of registrant as specified in its charter)
"""
    body = 'Our common stock is traded on the Nasdaq Global Select Market under the symbol "AMZN."'
    found = identify(document(cover + "\n\n" + body), profile=FILINGS)
    assert (found.organisation, found.ticker, found.doc_type, found.period) == (
        "Amazon.com, Inc.",
        "AMZN",
        "10-K",
        "FY2017",
    )
    line = document_line(found)
    assert "fiscal year 2017 (FY2017)" in line and "AMZN" in line


def test_a_year_ended_in_january_is_the_fiscal_year_the_filing_calls_it() -> None:
    cover = (
        "FORM 10-K\n\nFor the fiscal year ended January 30, 2021\n\nACME STORES, INC.\n\n"
        "(Exact name of registrant as specified in its charter)"
    )
    body = " ".join(["Sales in fiscal 2020 grew."] * 5)
    assert identify(document(cover + "\n\n" + body), profile=FILINGS).period == "FY2020"


def test_an_earnings_release_says_its_quarter() -> None:
    text = "Acme Corporation Reports Fourth Quarter and Fiscal 2019 Results\n\nRevenue was up."
    found = identify(document(text, title="press release"), profile=FILINGS)
    assert (found.doc_type, found.period, found.organisation) == (
        "earnings release",
        "Q4 FY2019",
        "Acme Corporation",
    )


def test_a_cover_without_a_date_or_an_organisation_gets_none_never_a_guess() -> None:
    found = identify(
        document("A Field Guide to Mushrooms\n\nMushrooms grow in the woods.", title="Mushrooms")
    )
    assert (found.organisation, found.doc_type, found.date, found.period) == ("", "", None, "")
    assert found.title == "Mushrooms"
    assert identity_words(found) == ""


def test_a_date_inside_a_sentence_is_what_the_text_is_about_not_its_date() -> None:
    about = "Trends in Assault\n\nWe studied every person hospitalised from 1 April 2002 to 1 December 2004."
    assert identify(document(about, title="Trends")).date is None
    dated = "Trends in Assault\nPublished: 3 April 2014\n\nWe studied every person hospitalised in 2002."
    assert identify(document(dated, title="Trends")).date == dt.date(2014, 4, 3)


def test_only_a_copyright_line_names_an_organisation_not_a_lists_third_item() -> None:
    listed = "Promoters\n\nWe measured (a) cells, (b) mice and (c) promoter activity in vitro."
    assert identify(document(listed, title="Promoters")).organisation == ""
    held = "Promoters\n\nWe measured promoter activity.\n\n(c) 1992 Cancer Research Campaign."
    assert identify(document(held, title="Promoters")).organisation == "Cancer Research Campaign"


def test_what_a_sentence_says_in_passing_is_not_what_the_document_is() -> None:
    # An abstract's closing notice names its publisher, and a tool described in a paper has a
    # user's guide: neither is the document's organisation or kind.
    abstract = (
        "Droperidol\n\nWe gave droperidol to 40 patients and saw agitation settle within ten minutes; "
        "an extensive user's guide to the protocol is online. Copyright © 2012 John Wiley & Sons, Ltd.\n"
    )
    found = identify(document(abstract, title="Droperidol"))
    assert (found.organisation, found.doc_type) == ("", "")
    guide = (
        "Acme Router\nUser's Guide\n\nConnect the router.\n\n"
        "© 2020 Acme Networks, Inc. All rights reserved.\n"
    )
    found = identify(document(guide, title="Acme Router"), profile=DOCUMENTATION)
    assert (found.organisation, found.doc_type) == ("Acme Networks, Inc", "manual")
    assert identify(document(guide, title="Acme Router")).doc_type == ""  # the general profile reads no kind


def test_the_general_profile_reads_no_filing_form_symbol_or_fiscal_period() -> None:
    found = identify(document(QUARTERLY_COVER + "\n\n" + STATEMENT))
    assert (found.doc_type, found.ticker, found.period, found.fiscal_year) == ("", "", "", None)
    release = "Acme Corporation Reports Fourth Quarter and Fiscal 2019 Results\n\nRevenue was up."
    assert identify(document(release, title="press release")).period == ""


def test_a_title_that_names_a_file_gives_way_to_the_first_heading() -> None:
    found = identify(
        document("Older Adults and Technology Use\n\nSeniors go online.", title="a4f3ced0696009fec3179f")
    )
    assert found.title == "Older Adults and Technology Use"


def test_values_a_person_gives_win_and_are_remembered_as_given() -> None:
    given = parse_given({"organisation": "Apple", "period": "Q2 FY2024", "date": "2024-03-30"})
    found = with_given(identify(document(QUARTERLY_COVER + "\n\n" + STATEMENT), profile=FILINGS), given)
    assert (found.organisation, found.period, found.fiscal_year, found.fiscal_quarter) == (
        "Apple",
        "Q2 FY2024",
        2024,
        2,
    )
    assert found.date == dt.date(2024, 3, 30)
    assert found.given == ("organisation", "date", "period")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"colour": "red"}, "unknown metadata key 'colour'"),
        ({"date": "30/03/2024"}, "metadata date must be YYYY-MM-DD"),
        ({"period": "spring"}, "metadata period must look like FY2019"),
        ({"title": 3}, "metadata title must be a string"),
    ],
)
def test_bad_given_values_are_refused_with_the_reason(values: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidIdentity, match=message):
        parse_given(values)
