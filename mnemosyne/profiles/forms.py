"""A library's text as its full-text index reads it, documents and questions alike: numbers in the
forms people write them, for every profile (text/searchable_forms.py); fiscal periods written
out besides, for a profile whose documents are versions over time (periods.py)."""

from __future__ import annotations

from mnemosyne.profiles.catalog import Profile
from mnemosyne.profiles.periods import written_out
from mnemosyne.text import searchable_forms


def document_form(text: str, profile: Profile) -> str:
    text = searchable_forms.document_form(text)
    return written_out(text) if profile.versions else text


def query_form(text: str, *, versions: bool) -> str:
    text = searchable_forms.query_form(text)
    return written_out(text) if versions else text
