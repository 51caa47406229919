"""Lightweight markup: reStructuredText through docutils (to HTML, then read as a web page, so its
sections become headings), and AsciiDoc by its headings (`= Title`, `== Section`, …) with its
delimited listing and literal blocks kept as code. docutils runs with file inclusion and raw
passthrough off: a document cannot pull in files of this machine or inject markup."""

from __future__ import annotations

import re

from docutils import nodes
from docutils.core import publish_parts
from docutils.parsers.rst import roles
from docutils.utils import SystemMessage

from mnemosyne.ingestion.documents import ParsedDocument, UnreadableFile, title_from_filename
from mnemosyne.ingestion.markdown_lines import iter_markdown_headings
from mnemosyne.ingestion.parsers.html import parse_html
from mnemosyne.ingestion.text_encodings import decode_text
from mnemosyne.text.normalising import normalise_text

_DOCUTILS_SETTINGS = {
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "report_level": 5,
    "halt_level": 5,
    "warning_stream": False,
    "traceback": False,
    "doctitle_xform": False,
    "_disable_config": True,
    "input_encoding": "unicode",
    "embed_stylesheet": False,
    "stylesheet_path": "",
}
# Sphinx's cross-reference roles, which plain docutils does not know: their text kept as code.
_SPHINX_ROLES = (
    "mod", "class", "func", "meth", "attr", "exc", "data", "const", "obj", "ref", "doc", "term",
    "program", "option", "envvar", "file", "command", "keyword", "samp", "kbd", "menuselection",
)  # fmt: skip
for _role in _SPHINX_ROLES:
    roles.register_local_role(_role, roles.GenericRole(_role, nodes.literal))

_ASCIIDOC_HEADING = re.compile(r"^(={1,6})\s+(\S.*?)\s*=*\s*$")
_ASCIIDOC_DELIMITER = re.compile(r"^(-{4,}|\.{4,}|`{3})\s*$")
_ASCIIDOC_ATTRIBUTE = re.compile(r"^:[\w-]+!?:.*$")


def parse_rst(data: bytes, *, filename: str) -> ParsedDocument:
    source = decode_text(data)
    try:
        html = publish_parts(source, writer="html5", settings_overrides=_DOCUTILS_SETTINGS)["whole"]
    except (SystemMessage, ValueError, AttributeError, IndexError) as exc:
        raise UnreadableFile(f"not readable reStructuredText: {exc}") from exc
    page = parse_html(html.encode("utf-8"), filename=filename)
    first = next(iter_markdown_headings(page.text), None)
    title = first.title if first is not None else title_from_filename(filename)
    return ParsedDocument(title=title, item_type="rst", text=page.text, markdown=True, images=page.images)


def parse_asciidoc(data: bytes, *, filename: str) -> ParsedDocument:
    lines: list[str] = []
    title = ""
    fence = ""
    for line in decode_text(data).splitlines():
        delimiter = _ASCIIDOC_DELIMITER.match(line)
        if delimiter and (not fence or delimiter.group(1) == fence):
            fence = "" if fence else delimiter.group(1)
            lines.append("```")
            continue
        if fence:
            lines.append(line)
            continue
        heading = _ASCIIDOC_HEADING.match(line)
        if heading:
            level, text = len(heading.group(1)), heading.group(2)
            title = title or text
            lines.append(f"{'#' * level} {text}")
        elif not _ASCIIDOC_ATTRIBUTE.match(line) and not line.startswith("//"):
            lines.append(line)
    text = normalise_text("\n".join(lines))
    if not text:
        raise UnreadableFile("empty file")
    return ParsedDocument(
        title=title or title_from_filename(filename), item_type="asciidoc", text=text, markdown=True
    )
