"""Numbers in the forms people type them, for the full-text index and its queries.

PostgreSQL's parser reads "12,345" as the two numbers 12 and 345, so a table's figures could only
be found in pieces, and never by "12345". Before a text goes to `to_tsvector` (a chunk, a page, a
document's identity) and before a query does, the same rewriting is applied:

- thousands separators go: "12,345" and "1,234.56" become "12345" and "1234.56";
- a negative in parentheses, as statements print them, is also indexed with its sign: a
  document's "(1,234)" becomes "1234 -1234" (a query's stays "1234": a leading "-" is the
  full-text leg's exclusion operator);

(A profile whose documents are versions over time also writes fiscal periods out:
mnemosyne/profiles/periods.py.)

"$" and "%" need nothing: the parser already sets them apart from the number. Pure.
"""

from __future__ import annotations

import re

_GROUPED = re.compile(r"(?<![\d,.])(\d{1,3}(?:,\d{3})+)(\.\d+)?(?![\d,]*\d)")
_NEGATIVE = re.compile(r"\(\s*\$?\s*(\d+(?:\.\d+)?)\s*\)")


def _ungrouped(text: str) -> str:
    return _GROUPED.sub(lambda match: match.group(1).replace(",", "") + (match.group(2) or ""), text)


def document_form(text: str) -> str:
    """A document's text as it is indexed."""
    text = _ungrouped(text)
    return _NEGATIVE.sub(lambda match: f"{match.group(0)} -{match.group(1)}", text)


def query_form(text: str) -> str:
    """A query's text as it is matched against the index."""
    return _ungrouped(text)
