"""Questions as people write them: what to search for, and what they say about which version.

An analyst's question carries instructions along with its content — "Round your answer to two
decimal places.", "Answer in USD millions.", "Give a response to the question by relying on the
details shown in the cash flow statement.", "You are a financial analyst." Their words are rare
in the documents and blur the query's vector. `content` is the question without them (what the
vector legs embed); the instruction's own content stays ("…shown in the cash flow statement" keeps
"cash flow statement"). The full-text legs read the whole question: BM25 weighs each word by its
rarity already (a function word at most as the median content word: query_terms.py), and a unit
the question names ("in USD millions") is evidence for the page of a statement printed "(In
millions)" (measured: docs/benchmarks.md, "Long documents").

`pages_named` reads the pages a question points at ("on page 14", "the second page", "the cover
page", "slide 3"): their chunks are preferred (search/units.py).

`wants_latest` tells whether the question asks for the newest version of a document ("the most
recent 10-Q", "the latest quarter") without naming a period: then the newest of a document's
versions is preferred (search/documents.py). Pure.
"""

from __future__ import annotations

import re

_INSTRUCTIONS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # "Round your answer to two decimal places." / "rounded to the nearest million"
        r"\b(?:please\s+)?round(?:ed|ing)?\b(?:\s+(?:your|the|all))?(?:\s+(?:final\s+)?(?:answers?|results?|"
        r"figures?|values?|numbers?|it))?\s+to\s+(?:the\s+nearest\s+)?[\w-]+(?:\s+(?:decimal\s+)?(?:places?|"
        r"digits?|points?|decimals?|significant\s+figures?))?(?:\s+(?:place|precision))?[^.?!\n]{0,20}[.?!]?",
        # "Answer in USD millions." / "Anwser in units of percents" / "Express the answer as a percentage"
        r"\b(?:please\s+)?(?:answer|anwser|respond|reply|express|report|provide|give|present|state)\s+"
        r"(?:(?:your|the|final)\s+)*(?:answer|response|result|figure|value|number)?\s*"
        r"(?:in|as|using)\s+(?:units?\s+of\s+|(?:an?|the)\s+)?"
        r"(?:usd|us\$|\$|dollars?|percentages?|percents?|ratios?|decimals?|millions?|billions?|thousands?|"
        r"whole\s+numbers?|numbers?|%)(?:\s+(?:usd|dollars?|millions?|billions?|thousands?|format|form|terms?))*"
        r"[.?!]?",
        # "(in USD millions)", "(in percent)"
        r"\(\s*in\s+(?:usd|us\$|\$)?\s*(?:millions?|billions?|thousands?|percents?|percentages?|%)\s*\)",
        # "Give a response to the question by relying on the details shown in the …"
        r"\bgive\s+(?:a|your|the)\s+(?:response|answer)\s+to\s+the\s+question\s+by\s+",
        r"\b(?:by\s+)?relying\s+on\s+(?:the\s+)?(?:details|information|data|figures|line\s+items?)\s+"
        r"(?:shown|outlined|provided|reported|presented|given|stated|found|contained)\s+(?:in|on|within)\s+",
        r"\bbased\s+on\s+(?:the\s+)?(?:information|details|data)\s+(?:provided|given|shown)\s+(?:primarily\s+)?"
        r"(?:in|by)\s+",
        # "Answer the following question (to the best of your abilities) by primarily using information
        # that is shown in the balance sheet:" keeps "the balance sheet".
        r"\banswer\s+the\s+following\s+question(?:\s+to\s+the\s+best\s+of\s+your\s+abilit(?:y|ies))?"
        r"(?:\s+by)?(?:\s+primarily)?(?:\s+(?:using|utili[sz]ing|relying\s+on))?(?:\s+(?:the\s+)?(?:information|"
        r"details|data|line\s+items?)\s+(?:that\s+(?:is|are)\s+)?(?:clearly\s+)?(?:shown|outlined|provided|reported|"
        r"presented)\s+(?:in|on))?\s*:?",
        # "Calculate what was asked by utilizing the line items clearly shown in the income statement."
        r"\b(?:calculate|compute)\s+what\s+was\s+asked\s+(?:by\s+)?(?:using|utili[sz]ing)\s+(?:the\s+)?"
        r"(?:line\s+items?|information|details|data)\s+(?:clearly\s+)?(?:shown|outlined|provided|reported)\s+in\s+",
        r"\b(?:primarily\s+)?(?:using|utili[sz]ing)\s+(?:the\s+)?(?:information|details|data|line\s+items?)\s+"
        r"(?:that\s+(?:is|are)\s+)?(?:clearly\s+)?(?:shown|outlined|provided|reported|presented)\s+in\s+",
        r"\bto\s+the\s+best\s+of\s+your\s+abilit(?:y|ies)\b",
        # A role to play: "You are a financial analyst.", "As an equity research analyst, …"
        r"^\s*(?:you\s+are|imagine\s+(?:that\s+)?you\s+are|assume\s+(?:that\s+)?you\s+are|act\s+as|acting\s+as)"
        r"\s+an?\b[^.?!\n]{0,120}[.?!]",
        r"^\s*as\s+an?\s+[\w\s-]{0,40}\b(?:analyst|investor|accountant|advisor|adviser|expert|manager)\b\s*,",
        r"\b(?:show\s+your\s+work|explain\s+your\s+reasoning|think\s+step\s+by\s+step)\b[.?!]?",
        # "Please write the answer in the list format, e.g. […]": to the end of the sentence.
        r"\b(?:write|format|list|present)\s+(?:the|your)\s+(?:final\s+)?answers?\b[^?!]*",
        r"\bplease\b",
    )
)
_SPACES = re.compile(r"\s+")
_LATEST = re.compile(
    r"\b(?:latest|most\s+recent|newest|most\s+current)\b"
    r"|\b(?:last|current)\s+(?:10-?[kq]|filing|report|quarter|quarterly\s+report|annual\s+report|fiscal\s+year)\b",
    re.IGNORECASE,
)
_NAMED_PERIOD = re.compile(
    r"\b(?:19|20)\d{2}\b|\bFY\s?'?\d{2,4}\b|\bQ[1-4]\b|\b[1-4]Q\b|\b(?:first|second|third|fourth)\s+quarter\b",
    re.IGNORECASE,
)


def content(question: str) -> str:
    """The question without its instructions (the whole question when that would leave nothing)."""
    text = question
    for pattern in _INSTRUCTIONS:
        text = pattern.sub(" ", text)
    text = _SPACES.sub(" ", text).strip(" ,;:")
    return text if sum(char.isalnum() for char in text) >= 3 else question


def wants_latest(question: str) -> bool:
    """The question asks for the newest version of a document and names no period of its own."""
    return bool(_LATEST.search(question)) and not _NAMED_PERIOD.search(question)


_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_ORDINAL_WORDS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
}
_PAGE_NUMBER = re.compile(
    r"\b(?:page|p\.|pg\.?|slide)\s*\(?(\d{1,4}|one|two|three|four|five|six|seven|eight|nine|ten)\b",
    re.IGNORECASE,
)
_PAGE_RANGE = re.compile(
    r"\b(?:pages|pp\.|slides)\s*(\d{1,4})\s*(?:-|–|to|and|through)\s*(\d{1,4})\b", re.IGNORECASE
)
_PAGE_ORDINAL = re.compile(
    r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth)\s+(?:page|slide)\b", re.IGNORECASE
)
_COVER = re.compile(r"\b(?:cover|front|title)\s+page\b", re.IGNORECASE)
# A range longer than this is not a pointer to pages.
MAX_PAGES_NAMED = 20


def pages_named(question: str) -> set[int]:
    """The page numbers a question points at."""
    pages: set[int] = set()
    for match in _PAGE_RANGE.finditer(question):
        first, last = int(match.group(1)), int(match.group(2))
        if 0 < first <= last and last - first < MAX_PAGES_NAMED:
            pages.update(range(first, last + 1))
    for match in _PAGE_NUMBER.finditer(question):
        value = match.group(1).lower()
        pages.add(int(value) if value.isdigit() else _NUMBER_WORDS[value])
    for match in _PAGE_ORDINAL.finditer(question):
        pages.add(_ORDINAL_WORDS[match.group(1).lower()])
    if _COVER.search(question):
        pages.add(1)
    return {page for page in pages if page > 0}
