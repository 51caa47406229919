"""Bytes of a text file to str: UTF-8 (with or without a BOM), UTF-16 with a BOM, else the most
likely of the legacy encodings documents are still written in (charset-normalizer, limited to them:
left to choose from every codec it reads KOI8-R as Shift_JIS). Among candidates that decode with as
few flaws as the best (on short text their language guess is noise), Windows-1252 wins, so short
Western European text is not read as Central or Baltic European."""

from __future__ import annotations

import codecs

import charset_normalizer

from mnemosyne.ingestion.documents import UnreadableFile

# Legacy encodings considered, most common first.
LEGACY_ENCODINGS = (
    "cp1252", "latin_1", "iso8859_15", "cp1250", "iso8859_2", "cp1251", "koi8_r", "koi8_u", "iso8859_5",
    "cp1253", "iso8859_7", "cp1254", "cp1255", "cp1256", "cp1257", "cp874", "mac_roman",
    "cp932", "euc_jp", "gb18030", "big5", "euc_kr",
)  # fmt: skip
_PREFERRED = "cp1252"


def decode_text(data: bytes) -> str:
    """The file's text; UnreadableFile when it is binary or in no encoding it could be read as."""
    return decode_text_as(data)[0]


def decode_text_as(data: bytes) -> tuple[str, str]:
    """The file's text and the encoding it was read in (utf-8, utf-16 or a legacy one)."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError as exc:
            raise UnreadableFile(f"not valid UTF-16 (invalid bytes at offset {exc.start})") from exc
    if b"\x00" in data:
        raise UnreadableFile("binary content (contains NUL bytes), not a text file")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as exc:
        offset = exc.start
    matches = charset_normalizer.from_bytes(data, cp_isolation=list(LEGACY_ENCODINGS))
    best = matches.best()
    if best is None:
        raise UnreadableFile(
            f"not valid UTF-8 (invalid byte at offset {offset}), nor text in another encoding recognised"
        )
    chosen = next(
        (match for match in matches if match.encoding == _PREFERRED and match.chaos == best.chaos),
        best,
    )
    return str(chosen), chosen.encoding
