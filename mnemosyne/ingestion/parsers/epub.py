"""E-books through ebooklib: the chapters in reading order (the spine), each read as a web page
(html.py) and made a section titled from the table of contents, or its own first heading."""

from __future__ import annotations

import io
import posixpath
import zipfile
from collections.abc import Iterable
from dataclasses import replace

import ebooklib
from ebooklib import epub

from mnemosyne.ingestion.documents import ImageAsset, ParsedDocument, UnreadableFile, title_from_filename
from mnemosyne.ingestion.markdown_lines import iter_markdown_headings
from mnemosyne.ingestion.parsers.archives import check_archive
from mnemosyne.ingestion.parsers.html import parse_html


def parse_epub(data: bytes, *, filename: str) -> ParsedDocument:
    check_archive(data, "EPUB")
    try:
        book = epub.read_epub(io.BytesIO(data), options={"ignore_ncx": False})
    except (epub.EpubException, KeyError, ValueError, zipfile.BadZipFile, AttributeError) as exc:
        raise UnreadableFile(f"not a readable EPUB file: {exc}") from exc
    titles = _toc_titles(book.toc)
    parts: list[str] = []
    images: list[ImageAsset] = []
    length = 0
    for idref, _ in book.spine:
        item = book.get_item_with_id(idref)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
            continue
        try:
            chapter = parse_html(item.get_content(), filename=item.get_name())
        except UnreadableFile:
            continue  # a cover page or an empty divider
        text = chapter.text
        first = next(iter_markdown_headings(text), None)
        if first is None or first.line_start > 0:
            heading = titles.get(_path(item.get_name())) or chapter.title
            text = f"# {heading}\n\n{text}"
        separator = "\n\n" if parts else ""
        shift = length + len(separator) + len(text) - len(chapter.text)
        images.extend(replace(image, char_offset=image.char_offset + shift) for image in chapter.images)
        parts.append(separator + text)
        length += len(separator) + len(text)
    text = "".join(parts)
    if not text:
        raise UnreadableFile("no readable chapters in the EPUB file")
    titled = book.get_metadata("DC", "title")
    title = str(titled[0][0]).strip() if titled else ""
    return ParsedDocument(
        title=title or title_from_filename(filename),
        item_type="epub",
        text=text,
        markdown=True,
        images=tuple(images),
    )


def _toc_titles(toc: Iterable[object]) -> dict[str, str]:
    """Chapter file → its title in the table of contents (the first entry pointing into it)."""
    titles: dict[str, str] = {}
    for entry in toc:
        if isinstance(entry, tuple):
            section, children = entry
            _add(titles, section)
            titles.update({key: value for key, value in _toc_titles(children).items() if key not in titles})
        else:
            _add(titles, entry)
    return titles


def _add(titles: dict[str, str], entry: object) -> None:
    href, title = getattr(entry, "href", None), getattr(entry, "title", None)
    if href and title:
        titles.setdefault(_path(href), " ".join(str(title).split()))


def _path(href: str) -> str:
    return posixpath.basename(href.split("#")[0])
