"""Financial terms in the words a filing uses: a ratio or an abbreviation names line items.

An analyst asks for "days payable outstanding" or "ROA"; a filing prints neither, only the lines
they are computed from ("Accounts payable", "Cost of sales", "Total assets", "Net income") in its
statements. This glossary is the textbook definitions of common financial measures and their
abbreviations, and of the names the primary statements go by; a question that uses one also
searches for what it is made of (`expanded`), so the statement pages that hold the figures can be
found. It names measures, never a company or a document. Pure.
"""

from __future__ import annotations

import re

# The primary statements, as their titles read.
_IS = "statements of operations income statements"
_BS = "balance sheets"
_CF = "statements of cash flows"
# A measure (its spellings, as a regular expression) → the words of the line items it is made of,
# and the statements that print them.
_MEASURES: tuple[tuple[str, str], ...] = (
    (r"return on (?:total )?assets?|\broa\b", f"net income total assets {_IS} {_BS}"),
    (
        r"return on (?:shareholders'?|stockholders'?|common )?equity|\broe\b",
        f"net income total shareholders equity {_IS} {_BS}",
    ),
    (r"return on (?:invested )?capital|\broic\b|\broce\b", f"operating income total debt equity {_IS} {_BS}"),
    (
        r"days? payables? outstanding|\bdpo\b|payables? turnover",
        f"accounts payable cost of sales {_BS} {_IS}",
    ),
    (
        r"days? sales outstanding|\bdso\b|receivables? turnover",
        f"accounts receivable net revenue {_BS} {_IS}",
    ),
    (
        r"days? inventory outstanding|\bdio\b|inventory turnover|days? in inventory",
        f"inventories cost of sales {_BS} {_IS}",
    ),
    (r"cash conversion cycle", f"inventories accounts receivable accounts payable cost of sales {_BS} {_IS}"),
    (r"fixed assets? turnover", f"property and equipment net revenue {_BS} {_IS}"),
    (r"(?<!fixed )assets? turnover", f"total assets revenue {_BS} {_IS}"),
    (r"current ratio", f"total current assets total current liabilities {_BS}"),
    (
        r"quick ratio|acid[- ]test",
        f"cash and cash equivalents marketable securities receivables total current liabilities {_BS}",
    ),
    (r"cash ratio", f"cash and cash equivalents total current liabilities {_BS}"),
    (r"working capital", f"total current assets total current liabilities {_BS}"),
    (r"debt[- ]to[- ]equity|gearing", f"long-term debt total shareholders equity {_BS}"),
    (r"debt[- ]to[- ]assets?", f"long-term debt total assets {_BS}"),
    (r"total debt", f"long-term debt current portion of long-term debt short-term borrowings {_BS}"),
    (r"net debt", f"long-term debt cash and cash equivalents {_BS}"),
    (r"interest coverage|times interest earned", f"operating income interest expense {_IS}"),
    (r"\bebitda\b", f"operating income depreciation and amortization {_IS} {_CF}"),
    (r"\bebit\b", f"operating income {_IS}"),
    (
        r"capital expenditures?|\bcapex\b|\bcap ?ex\b",
        f"purchases of property and equipment capital expenditures {_CF}",
    ),
    (
        r"free cash flow|\bfcf\b",
        f"net cash provided by operating activities purchases of property and equipment {_CF}",
    ),
    (
        r"operating cash flows?|cash flows? from operations",
        f"net cash provided by operating activities {_CF}",
    ),
    (r"gross (?:profit )?margin", f"gross profit revenue cost of sales {_IS}"),
    (r"operating (?:profit )?margin", f"operating income revenue {_IS}"),
    (r"net (?:profit |income )?margin|profit margin", f"net income revenue {_IS}"),
    (r"effective tax rate", f"provision for income taxes income before income taxes {_IS}"),
    (r"(?:dividend )?payout ratio", f"dividends paid net income {_CF} {_IS}"),
    (r"\beps\b", f"earnings per share {_IS}"),
    (r"\bcogs\b", f"cost of goods sold cost of sales {_IS}"),
    (r"\bsg&a\b|\bsga\b", f"selling general and administrative expenses {_IS}"),
    (r"\br&d\b", f"research and development expense {_IS}"),
    (r"\bd&a\b", f"depreciation and amortization {_CF}"),
    (r"\bppe\b|\bpp&e\b|\bppne\b|\bpp&e\b|fixed assets", f"property plant and equipment {_BS}"),
    (r"book value", f"total shareholders equity {_BS}"),
    (r"(?:share|stock) (?:buy ?backs?|repurchases?)", f"repurchases of common stock {_CF}"),
)
# A statement (its other names) → the words of its titles.
_STATEMENTS: tuple[tuple[str, str], ...] = (
    (r"income statements?|\bp&l\b|profit and loss", "statements of operations statements of income"),
    (r"balance sheets?|statements? of financial position", "balance sheets"),
    (r"cash flows? statements?|statements? of cash flows?", "statements of cash flows"),
)
_ENTRIES = tuple((re.compile(pattern, re.IGNORECASE), words) for pattern, words in _MEASURES + _STATEMENTS)


def expanded(question: str) -> str:
    """The question followed by the line items of each financial measure it names."""
    found: list[str] = []
    for pattern, words in _ENTRIES:
        if pattern.search(question) and words not in found:
            found.append(words)
    return f"{question} ({'; '.join(found)})" if found else question
