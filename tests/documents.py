"""Documents built in code for the tests: PDFs written by hand, images made with Pillow."""

from __future__ import annotations

import io
import zlib

from PIL import Image, PngImagePlugin


def png_bytes(size: tuple[int, int] = (4, 3), colour: str = "red", **text: str) -> bytes:
    info = PngImagePlugin.PngInfo()
    for key, value in text.items():
        info.add_text(key, value)
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, "PNG", pnginfo=info)
    return buffer.getvalue()


def jpeg_bytes(description: str | None = None, size: tuple[int, int] = (8, 8)) -> bytes:
    image = Image.new("RGB", size, "blue")
    exif = image.getexif()
    if description is not None:
        exif[0x010E] = description
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", exif=exif)
    return buffer.getvalue()


# An image XObject: (filter, encoded bytes, width, height).
PdfImage = tuple[str, bytes, int, int]


def pdf_bytes(pages: list[list[str]], images: dict[int, PdfImage] | None = None, title: str = "") -> bytes:
    """A PDF written by hand: one line of Helvetica text per entry, an optional image per page."""
    images = images or {}
    objects: list[bytes] = [b"", b"", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    kids = []
    for index, lines in enumerate(pages):
        ops = [b"BT /F1 12 Tf 72 720 Td 16 TL"]
        ops += [b"(" + line.encode("latin-1") + b") Tj T*" for line in lines]
        ops.append(b"ET")
        xobjects = b""
        if index in images:
            image_filter, data, width, height = images[index]
            header = b"<< /Type /XObject /Subtype /Image /Width %d /Height %d" % (width, height)
            header += b" /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /%s" % image_filter.encode()
            header += b" /Length %d >>" % len(data)
            xobjects = b" /XObject << /Im0 %d 0 R >>" % add(header + b"\nstream\n" + data + b"\nendstream")
            ops.append(b"q 100 0 0 100 72 300 cm /Im0 Do Q")
        content = b"\n".join(ops)
        contents = add(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
        resources = b"<< /Font << /F1 3 0 R >>%s >>" % xobjects
        page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources %s /Contents %d 0 R >>"
        kids.append(add(page % (resources, contents)))
    return pdf_file(objects, kids, title)


def pdf_file(objects: list[bytes], kids: list[int], title: str = "") -> bytes:
    """The PDF whose objects are `objects` (1 and 2 left for the catalog and the page tree) and
    whose pages are the objects numbered in `kids`: catalog, page tree, info, cross-references."""
    objects = list(objects)
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    kids_array = b" ".join(b"%d 0 R" % kid for kid in kids)
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids_array, len(kids))
    if title:
        objects.append(b"<< /Title (%s) >>" % title.encode())
    info = b" /Info %d 0 R" % len(objects) if title else b""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, info, xref)
    return bytes(out)


def report_pdf() -> bytes:
    # Pictures, not specks: a PDF's images under 16 pixels both ways are passed over.
    red = Image.new("RGB", (40, 30), "red")
    return pdf_bytes(
        [
            ["Tides rise twice a day.", "The moon drives them."],
            ["Barrages hold back water.", "Figure 1: A barrage at low tide"],
            ["Turbines turn in the stream.", "They resemble wind turbines."],
        ],
        images={
            1: ("FlateDecode", zlib.compress(red.tobytes()), 40, 30),
            2: ("DCTDecode", jpeg_bytes(size=(32, 32)), 32, 32),
        },
        title="Tidal Report",
    )


def outlined_pdf(*, stray_entry: bool = False) -> bytes:
    """A three-page report with an outline (bookmarks), one section starting mid-page and one entry
    whose title is not on its page, written into report-like pages by pypdf's writer; with
    `stray_entry`, a last entry points at a page that is not in the document."""
    from pypdf import PdfReader, PdfWriter

    plain = pdf_bytes(
        [
            ["1 Tides", "Tides rise twice a day.", "The moon drives them."],
            ["Barrages hold back water.", "1.1 Barrages", "A barrage spans the estuary mouth."],
            ["Turbines turn in the stream.", "They resemble wind turbines."],
        ],
        title="Outlined Report",
    )
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(plain)))
    tides = writer.add_outline_item(title="1 Tides", page_number=0)
    writer.add_outline_item(title="1.1 Barrages", page_number=1, parent=tides)
    writer.add_outline_item(title="2 Power generation", page_number=2)  # not printed on page 3
    if stray_entry:
        # An entry pointing at a page object that is not among the document's pages.
        from pypdf import PageObject

        stray = writer._add_object(PageObject.create_blank_page(width=612, height=792))
        writer.add_outline_item(title="3 Appendix", page_number=stray)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
