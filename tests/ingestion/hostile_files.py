"""Files made to hurt the server that reads them, built at test time (none is kept in the repository).

Each is small on the wire and costly to read naively: an office file that inflates a thousand
times, entities that expand a billion times, a PDF of twenty thousand pages, a PDF whose page tree
loops, a page nested two hundred thousand deep, a CSV line of 300 MB, an e-book whose rootfile
points outside the archive."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

_MIB = 1024 * 1024


def docx_bomb(inflated: int = 1536 * _MIB) -> bytes:
    """A DOCX of about 1.5 MB whose document part inflates to `inflated` bytes of zeros.

    Written by hand in a second: each MiB of zeros deflates, after a full flush, to the same bytes,
    so the compressed part is one segment repeated (a full flush resets the compressor)."""
    zeros = b"\0" * _MIB
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    segment = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    count = inflated // _MIB
    data = segment * count + zlib.compressobj(9, zlib.DEFLATED, -15).flush(zlib.Z_FINISH)
    crc = 0
    for _ in range(count):
        crc = zlib.crc32(zeros, crc)
    types = (
        b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        b'<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
        b'officedocument.wordprocessingml.document.main+xml"/></Types>'
    )
    parts = [
        (b"[Content_Types].xml", 0, types, zlib.crc32(types), len(types)),
        (b"word/document.xml", 8, data, crc, count * _MIB),
    ]
    out, directory = io.BytesIO(), io.BytesIO()
    for name, method, body, checksum, size in parts:
        offset = out.tell()
        fields = (20, 0, method, 0, 0x21, checksum, len(body), size, len(name))
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, *fields, 0) + name + body)
        directory.write(
            struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, *fields, 0, 0, 0, 0, 0, offset) + name
        )
    start, listing = out.tell(), directory.getvalue()
    out.write(
        listing + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(parts), len(parts), len(listing), start, 0)
    )
    return out.getvalue()


def xlsx_entities() -> bytes:
    """An XLSX whose shared strings are a billion laughs."""
    laughs = ['<!ENTITY lol "lol">'] + [
        f'<!ENTITY lol{level} "{("&lol" + (str(level - 1) if level > 1 else "") + ";") * 10}">'
        for level in range(1, 10)
    ]
    strings = (
        '<?xml version="1.0"?><!DOCTYPE sst [' + "".join(laughs) + "]>"
        '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="1">'
        "<si><t>&lol9;</t></si></sst>"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.spreadsheetml.sheet.main+xml"/></Types>',
        )
        archive.writestr(
            "xl/workbook.xml",
            '<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
            '<sheets><sheet name="S" sheetId="1"/></sheets></workbook>',
        )
        archive.writestr("xl/sharedStrings.xml", strings)
    return buffer.getvalue()


def pdf_of_pages(pages: int = 20_000) -> bytes:
    """A PDF of `pages` empty pages, written by hand (about 100 bytes a page)."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + n} 0 R" for n in range(pages))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode())
    objects += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"] * pages
    return _pdf(objects)


def pdf_looping_page_tree() -> bytes:
    """A PDF whose page tree holds itself."""
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
            b"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 1 >>",
        ]
    )


def _pdf(objects: list[bytes]) -> bytes:
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def html_nested(depth: int = 200_000) -> bytes:
    """A page of `depth` nested elements (2.2 MB at 200,000)."""
    return b"<html><body>" + b"<div>" * depth + b"deep" + b"</div>" * depth + b"</body></html>"


def csv_long_line(path: Path, size: int = 300 * _MIB) -> None:
    """A CSV file of one line of `size` bytes, written to `path` (not held in memory)."""
    with path.open("wb") as out:
        out.write(b"a,")
        chunk = b"x" * _MIB
        for _ in range(size // _MIB):
            out.write(chunk)
        out.write(b"\n")


def epub_escaping() -> bytes:
    """An EPUB whose rootfile points outside the archive."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip")
        archive.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="../../../../etc/passwd" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
    return buffer.getvalue()


# Each hostile file by name (the CSV is written by csv_long_line: 300 MB is not held in memory).
IN_MEMORY: dict[str, Callable[[], bytes]] = {
    "bomb.docx": docx_bomb,
    "laughs.xlsx": xlsx_entities,
    "pages.pdf": pdf_of_pages,
    "loop.pdf": pdf_looping_page_tree,
    "nested.html": html_nested,
    "escaping.epub": epub_escaping,
}
