"""PDF pages drawn for the citation viewer: a page that cannot be drawn says why (the viewer then
shows the chunk's text), never an error page. Pure (bytes in, a picture or the reason out)."""

from __future__ import annotations

import pytest

from mnemosyne.library.page_images import NoPicture, _render
from tests.conftest import FIXTURES


def test_a_page_is_drawn_with_its_size_in_points() -> None:
    data, size = _render((FIXTURES / "pdfs" / "libtasn1.pdf").read_bytes(), 1)
    assert data.startswith(b"\x89PNG") and (round(size.width), round(size.height)) == (612, 792)


@pytest.mark.parametrize(
    ("pdf", "number", "reason"),
    [
        (b"%PDF-1.7 not really", 1, "cannot be opened as a PDF"),
        ((FIXTURES / "pdfs" / "libtasn1.pdf").read_bytes(), 999, "has no page 999"),
    ],
)
def test_what_cannot_be_drawn_says_why(pdf: bytes, number: int, reason: str) -> None:
    with pytest.raises(NoPicture, match=reason):
        _render(pdf, number)
