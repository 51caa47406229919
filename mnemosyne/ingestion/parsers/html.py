"""Web pages: the main content as Markdown (trafilatura), without the navigation around it.

Images keep their description in the text as "[Image: alt]"; only images embedded in the page as
`data:` URIs carry bytes, since fetching remote ones would reach out to arbitrary hosts.
"""

from __future__ import annotations

import base64
import binascii
import re
import warnings
from dataclasses import dataclass

import trafilatura
from bs4 import BeautifulSoup, Tag, XMLParsedAsHTMLWarning

from mnemosyne.ingestion.documents import ImageAsset, ParsedDocument, UnreadableFile, title_from_filename
from mnemosyne.ingestion.parsers.image_data import (
    MAX_IMAGE_BYTES,
    clean_caption,
    embedded_image,
    image_marker,
)
from mnemosyne.ingestion.parsers.nesting import check_nesting
from mnemosyne.text.normalising import normalise_text

_BOILERPLATE = ["nav", "aside", "script", "style", "noscript", "template", "form", "iframe", "svg"]
_HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"]
_BLOCKS = ["p", "div", "li", "tr", "table", "section", "article", "main", "blockquote", "pre", "ul", "ol"]
_BLOCKS += ["dl", "dt", "dd", "figure", "figcaption", "header", "footer"]
# Every <img> is renamed to a placeholder before extraction so its Markdown link can be found again.
_PLACEHOLDER = "https://image.invalid/{}.png"
_IMAGE_LINK = re.compile(r"!\[[^\n]*?\]\(https://image\.invalid/(\d+)\.png\)")
# Marks where an embedded image's marker sits while the text is normalised; a private-use character.
_ANCHOR = "\ue000"
_ANCHORED = re.compile(f"{_ANCHOR}(\\d+){_ANCHOR}")
_DATA_URI = re.compile(r"data:image/[\w.+-]+;base64,", re.IGNORECASE)


@dataclass(frozen=True)
class _Picture:
    caption: str
    data: bytes | None  # only for an image embedded in the page


def parse_html(data: bytes, *, filename: str) -> ParsedDocument:
    if b"\x00" in data:
        raise UnreadableFile("binary content (contains NUL bytes), not an HTML page")
    check_nesting(data)
    with warnings.catch_warnings():
        # XHTML (an e-book's chapters, some sites) is read as HTML on purpose: the lenient parser.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(data, "lxml")
    title = _title(soup)
    _drop_boilerplate(soup)
    pictures = _rename_images(soup)
    markdown = _main_content(str(soup)) or _all_content(soup)
    text, images = _place_images(markdown, pictures)
    if not text:
        raise UnreadableFile("no readable text in the HTML page")
    return ParsedDocument(
        title=title or title_from_filename(filename),
        item_type="html",
        text=text,
        markdown=True,
        images=tuple(images),
    )


def _title(soup: BeautifulSoup) -> str:
    for tag in (soup.title, soup.find("h1")):
        if isinstance(tag, Tag) and (title := tag.get_text(" ", strip=True)):
            return " ".join(title.split())
    return ""


def _drop_boilerplate(soup: BeautifulSoup) -> None:
    for tag in soup.find_all(_BOILERPLATE):
        tag.decompose()
    # A page's header and footer go; an article's own header holds its headline and stays.
    for tag in soup.find_all(["header", "footer"]):
        if not tag.decomposed and tag.find_parent(["article", "main"]) is None:
            tag.decompose()


def _rename_images(soup: BeautifulSoup) -> list[_Picture]:
    pictures: list[_Picture] = []
    for index, img in enumerate(soup.find_all("img")):
        figure = img.find_parent("figure")
        figcaption = figure.find("figcaption") if figure is not None else None
        candidates = [str(img.get("alt") or ""), str(img.get("title") or "")]
        if isinstance(figcaption, Tag):
            candidates.insert(1, figcaption.get_text(" ", strip=True))
        caption = next((clean_caption(c) for c in candidates if c.strip()), "")
        pictures.append(_Picture(caption, _embedded_bytes(str(img.get("src") or ""))))
        img.attrs = {"src": _PLACEHOLDER.format(index), "alt": caption}
    return pictures


def _embedded_bytes(src: str) -> bytes | None:
    match = _DATA_URI.match(src.strip())
    if match is None:
        return None
    payload = src.strip()[match.end() :]
    if len(payload) * 3 // 4 > MAX_IMAGE_BYTES:
        return None  # too large to keep; the marker still shows its caption
    try:
        return base64.b64decode(payload, validate=False)
    except (binascii.Error, ValueError):
        return None


def _main_content(html: str) -> str:
    extracted = trafilatura.extract(
        html,
        output_format="markdown",
        include_formatting=True,  # keeps headings as Markdown
        include_images=True,
        include_tables=True,
        include_comments=False,
        include_links=False,
    )
    return extracted or ""


def _all_content(soup: BeautifulSoup) -> str:
    """Every text of the page as Markdown, for pages where trafilatura finds no main content."""
    body = soup.body or soup
    for img in body.find_all("img"):
        img.replace_with(f"\n\n![{img.get('alt') or ''}]({img.get('src')})\n\n")
    for heading in body.find_all(_HEADINGS):
        level = int(heading.name[1])
        heading.replace_with(f"\n\n{'#' * level} {heading.get_text(' ', strip=True)}\n\n")
    for br in body.find_all("br"):
        br.replace_with("\n")
    for block in body.find_all(_BLOCKS):
        block.insert_before("\n\n")
        block.insert_after("\n\n")
    return "\n".join(" ".join(line.split()) for line in body.get_text().split("\n"))


def _place_images(markdown: str, pictures: list[_Picture]) -> tuple[str, list[ImageAsset]]:
    """Replace image links with markers; an embedded image is recorded where its marker ends up."""

    def marker(match: re.Match[str]) -> str:
        index = int(match.group(1))
        picture = pictures[index]
        if picture.data is None:
            return image_marker(picture.caption) if picture.caption else ""
        return f"{_ANCHOR}{index}{_ANCHOR}{image_marker(picture.caption)}"

    text = normalise_text(_IMAGE_LINK.sub(marker, markdown.replace(_ANCHOR, "")))
    parts: list[str] = []
    images: list[ImageAsset] = []
    cursor = offset = 0
    for anchor in _ANCHORED.finditer(text):
        parts.append(text[cursor : anchor.start()])
        offset += anchor.start() - cursor
        cursor = anchor.end()
        picture = pictures[int(anchor.group(1))]
        if picture.data is not None and (
            asset := embedded_image(picture.data, caption=picture.caption, page=None, char_offset=offset)
        ):
            images.append(asset)
    parts.append(text[cursor:])
    return "".join(parts), images
