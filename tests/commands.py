"""Management commands called as a person types them: what they print, or the one line they refuse with."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError


def run(*args: str) -> str:
    """What the command prints on standard output, stripped."""
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().strip()


def refused(*args: str) -> str:
    """The CommandError the command ends with (the test fails if it does not)."""
    with pytest.raises(CommandError) as raised:
        call_command(*args, stdout=StringIO(), stderr=StringIO())
    return str(raised.value)
