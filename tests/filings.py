"""Filings written by hand for the tests: a quarterly or annual report's cover, a statement set
without rules (aligned columns of numbers), and a page of discussion, as a real 10-Q prints them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from tests.documents import pdf_file

# Helvetica's advance widths (per 1000 em) of what numbers are printed with.
_WIDTHS = {**dict.fromkeys("0123456789$", 556), ",": 278, ".": 278, "(": 333, ")": 333, "-": 333, " ": 278}


@dataclass(frozen=True)
class Text:
    x: float
    y: float
    text: str
    size: float = 10.0
    bold: bool = False


def right_aligned(text: str, right: float, y: float, size: float = 10.0, bold: bool = False) -> Text:
    width = sum(_WIDTHS.get(char, 556) for char in text) * size / 1000
    return Text(right - width, y, text, size, bold)


def positioned_pdf(pages: list[list[Text]], title: str = "") -> bytes:
    """A PDF whose pages carry each text where it says, in Helvetica (or Helvetica-Bold)."""
    objects: list[bytes] = [
        b"",
        b"",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>",
    ]

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    kids = []
    for texts in pages:
        ops = []
        for text in texts:
            escaped = text.text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            font = b"/F2" if text.bold else b"/F1"
            ops.append(
                b"BT %s %.1f Tf %.2f %.2f Td (%s) Tj ET"
                % (font, text.size, text.x, text.y, escaped.encode("latin-1"))
            )
        content = b"\n".join(ops)
        contents = add(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
        page = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]"
            b" /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents %d 0 R >>"
        )
        kids.append(add(page % contents))
    return pdf_file(objects, kids, title)


MONTHS_TO_DATE = {1: "Three", 2: "Six", 3: "Nine"}


def quarterly_report(
    organisation: str, ticker: str, end: dt.date, quarter: int, cash: str, *, discussion: str
) -> bytes:
    """A 10-Q: cover, balance sheet, statement of operations (three months and the months to date),
    and a page of discussion."""
    ended = f"{end:%B} {end.day}, {end.year}"
    cover = [
        Text(120, 740, "UNITED STATES SECURITIES AND EXCHANGE COMMISSION", 12, True),
        Text(260, 716, "FORM 10-Q", 14, True),
        Text(
            40,
            690,
            "QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934",
            8,
        ),
        Text(200, 672, f"For the quarterly period ended {ended}", 10),
        Text(240, 640, organisation, 12, True),
        Text(160, 626, "(Exact name of registrant as specified in its charter)", 9),
        Text(40, 600, f"Common Stock {ticker} The Nasdaq Stock Market LLC", 9),
    ]
    balance = [
        Text(250, 740, organisation.upper(), 11, True),
        Text(170, 726, "CONDENSED CONSOLIDATED BALANCE SHEETS", 11, True),
        Text(270, 712, "(In millions)", 10),
        right_aligned(ended, 400, 690, 10, True),
        right_aligned("December 31, 2022", 540, 690, 10, True),
        Text(40, 674, "Current assets:", 10),
    ]
    rows = [
        ("Cash and cash equivalents", f"$ {cash}", "$ 4,225"),
        ("Accounts receivable, net", "848", "1,035"),
        ("Inventories", "32", "43"),
        ("Total current assets", "7,292", "6,106"),
        ("Accounts payable", "292", "253"),
        ("Total liabilities", "(7,040)", "(6,498)"),
    ]
    for index, (label, now, before) in enumerate(rows):
        y = 660 - 14 * index
        balance += [Text(52, y, label), right_aligned(now, 400, y), right_aligned(before, 540, y)]
    to_date = MONTHS_TO_DATE.get(quarter)
    operations = [
        Text(180, 740, "CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS", 11, True),
        Text(270, 726, "(In millions)", 10),
        right_aligned("Three Months Ended", 400, 704, 10, True),
        right_aligned(f"{to_date} Months Ended" if quarter > 1 else "Three Months Ended", 540, 704, 10, True),
        right_aligned(ended, 400, 690, 10, True),
        right_aligned(ended, 540, 690, 10, True),
    ]
    for index, (label, now, before) in enumerate(
        (("Net revenues", "6,489", "19,467"), ("Net income", "1,503", "4,509"))
    ):
        y = 670 - 14 * index
        operations += [Text(52, y, label), right_aligned(now, 400, y), right_aligned(before, 540, y)]
    words = discussion.split()
    lines = [" ".join(words[start : start + 12]) for start in range(0, len(words), 12)]
    prose = [Text(40, 720, "Management's Discussion and Analysis", 12, True)]
    prose += [Text(40, 700 - 14 * index, line) for index, line in enumerate(lines)]
    return positioned_pdf([cover, balance, operations, prose], title="0000320193-23-000077")
