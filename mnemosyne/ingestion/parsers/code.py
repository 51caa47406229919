"""Source code through tree-sitter (grammars from their wheels): every function, method, class and
type starts a section titled by its name, nested as in the code, so a chunk's section is its symbol
path ("Parser > parse") and a chunk never runs from one symbol into the next. The text is the file
as written (normalised like every text), so citations point at its lines."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from pathlib import PurePath

from tree_sitter import Language, Node, Parser

from mnemosyne.ingestion.documents import Heading, ParsedDocument, UnreadableFile
from mnemosyne.ingestion.text_encodings import decode_text
from mnemosyne.text.normalising import normalise_text

# Node types that start a section, per grammar; a node of another type is looked into.
_SYMBOLS: dict[str, frozenset[str]] = {
    "python": frozenset({"function_definition", "class_definition"}),
    "javascript": frozenset(
        {"function_declaration", "generator_function_declaration", "class_declaration", "method_definition"}
    ),
    "go": frozenset({"function_declaration", "method_declaration", "type_spec"}),
    "rust": frozenset({"function_item", "impl_item", "struct_item", "enum_item", "trait_item", "mod_item"}),
    "java": frozenset(
        {
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "method_declaration",
            "constructor_declaration",
        }
    ),
}
_SYMBOLS["typescript"] = _SYMBOLS["javascript"] | {
    "interface_declaration",
    "abstract_class_declaration",
    "enum_declaration",
    "type_alias_declaration",
    "function_signature",
}
# File suffix → (grammar name, the symbols' table).
SUFFIX_LANGUAGES = {
    ".py": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}


# Grammar name → (its wheel's module, the function returning the grammar).
_GRAMMARS = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
}


@functools.cache
def _language(name: str) -> Language:
    module, function = _GRAMMARS[name]
    return Language(getattr(importlib.import_module(module), function)())


def parse_code(data: bytes, *, filename: str) -> ParsedDocument:
    name = SUFFIX_LANGUAGES.get(PurePath(filename).suffix.lower())
    if name is None:
        raise UnreadableFile(f"no grammar for {filename!r}")
    text = normalise_text(decode_text(data))
    if not text:
        raise UnreadableFile("empty file")
    source = text.encode("utf-8")
    tree = Parser(_language(name)).parse(source)
    symbols = _SYMBOLS["typescript" if name == "tsx" else name]
    char_at = _char_offsets(text, source)
    headings = [
        Heading(offset=char_at(start), level=depth, title=title)
        for start, depth, title in _symbols(tree.root_node, symbols)
    ]
    return ParsedDocument(
        title=PurePath(filename).name, item_type="code", text=text, markdown=False, headings=tuple(headings)
    )


def _symbols(root: Node, types: frozenset[str]) -> list[tuple[int, int, str]]:
    """(start byte, nesting depth, name) of each symbol, in source order (iterative: code nests deep)."""
    found: list[tuple[int, int, str]] = []
    stack: list[tuple[Node, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        inner = depth
        if node.type in types:
            title = _name(node)
            if title:
                inner = depth + 1
                parent = node.parent
                decorated = parent is not None and parent.type == "decorated_definition"
                found.append(((parent.start_byte if decorated and parent else node.start_byte), inner, title))
        stack.extend((child, inner) for child in reversed(node.named_children))
    return found


def _name(node: Node) -> str:
    named = node.child_by_field_name("name")
    if node.type == "impl_item":  # Rust: `impl Trait for Type` is titled by both
        kind, trait = node.child_by_field_name("type"), node.child_by_field_name("trait")
        named = kind
        if kind is not None and trait is not None:
            return f"impl {_text(trait)} for {_text(kind)}"
    if node.type == "method_declaration" and node.child_by_field_name("receiver") is not None:  # Go
        receiver = node.child_by_field_name("receiver")
        types = [
            child
            for child in (receiver.named_children if receiver else [])
            if child.type == "parameter_declaration"
        ]
        kind = types[0].child_by_field_name("type") if types else None
        if kind is not None and named is not None:
            return f"{_text(kind).lstrip('*')}.{_text(named)}"
    return _text(named) if named is not None else ""


def _text(node: Node) -> str:
    return " ".join((node.text or b"").decode("utf-8", errors="replace").split())


def _char_offsets(text: str, source: bytes) -> Callable[[int], int]:
    """Byte offset in `source` (the UTF-8 of `text`) → character offset in `text`."""
    if len(source) == len(text):
        return lambda offset: offset
    starts = [0] * (len(source) + 1)
    position = 0
    for index, char in enumerate(text):
        width = len(char.encode("utf-8"))
        for byte in range(position, position + width):
            starts[byte] = index
        position += width
    starts[len(source)] = len(text)
    return lambda offset: starts[offset]
