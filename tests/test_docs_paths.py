"""The maps stay true: every module path docs/architecture.md and the README name exists, and so
does every module their code layout lists by name. Pure (reads files)."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAPS = ("docs/architecture.md", "README.md")
TOP_LEVEL = ("mnemosyne/", "access/", "mcp_server/", "console/", "tests/", "benchmarks/", "docs/")
_SKIPPED = {".git", ".venv", "node_modules", "__pycache__"}


@functools.cache
def _tree() -> tuple[str, ...]:
    """Every path of the checkout, relative, as text (virtualenv, packages and caches left out, and
    not walked: read when a test asks, not when the file is collected)."""
    found = []
    for directory, subdirectories, files in os.walk(ROOT):
        subdirectories[:] = [name for name in subdirectories if name not in _SKIPPED]
        relative = Path(directory).relative_to(ROOT)
        found += [(relative / name).as_posix() for name in (*subdirectories, *files)]
    return tuple(found)


def _braces(token: str) -> list[str]:
    """`a/{b,c}/` is `a/b/` and `a/c/`."""
    found = re.search(r"\{([^{}]*)\}", token)
    if found is None:
        return [token]
    return [
        expanded
        for choice in found.group(1).split(",")
        for expanded in _braces(token[: found.start()] + choice + token[found.end() :])
    ]


def named_paths(text: str) -> list[str]:
    """The module paths a page names in backticks: from a top-level directory, or a file name."""
    names = []
    for found in re.finditer(r"`([^`\s]+)`", text):
        token = found.group(1).split("::")[0].split(":")[0].rstrip(",.")
        if token.startswith(TOP_LEVEL) or re.fullmatch(r"[\w/]+\.py", token):
            names += _braces(token)
    return names


def exists(name: str) -> bool:
    if name.startswith(TOP_LEVEL):
        return (ROOT / name).exists()
    return any(path == name or path.endswith("/" + name) for path in _tree())


@pytest.mark.parametrize("page", MAPS)
def test_every_module_path_a_map_names_exists(page: str) -> None:
    named = named_paths((ROOT / page).read_text(encoding="utf-8"))
    assert len(named) > 10
    assert [name for name in named if not exists(name)] == []


def layout_entries(text: str) -> tuple[list[str], dict[str, str]]:
    """The code layout's block: the paths its lines start with (resolved under the directories
    above them), and each directory's description."""
    block = text.split("## Code layout", 1)[1].split("```", 2)[1]
    paths: list[str] = []
    described: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    last = ""
    for line in block.strip("\n").split("\n"):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent >= 24:  # a description's next line
            described[last] = described.get(last, "") + " " + line.strip()
            continue
        segments = re.split(r"\s{2,}", line.strip())
        heads: list[str] = []
        while segments and all(
            re.fullmatch(r"[\w-]*[./][\w.-]*/?|Makefile", token) for token in segments[0].split()
        ):
            heads += segments.pop(0).split()
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else ""
        for head in heads:
            paths.append(parent + head)
            if head.endswith("/"):
                stack.append((indent, parent + head))
                last = parent + head
                described[last] = " ".join(segments)
    return paths, described


def listed_modules(description: str) -> list[str]:
    """The module names a description lists: the items of its lists that are one lowercase name
    (what parentheses say about them is left out)."""
    while True:
        plain = re.sub(r"\([^()]*\)", "", description)
        if plain == description:
            break
        description = plain
    items = (item.strip().strip(".") for item in re.split(r"[,;+:]|\band\b", description))
    return [item.rstrip("/") for item in items if re.fullmatch(r"_*[a-z][a-z0-9_]*/?", item)]


def test_the_code_layout_lists_modules_that_exist() -> None:
    paths, described = layout_entries((ROOT / "docs/architecture.md").read_text(encoding="utf-8"))
    assert len(described) > 15
    assert [path for path in paths if not (ROOT / path).exists()] == []
    missing = []
    for directory, description in described.items():
        if not directory or directory.rstrip("/") in {"docs", "benchmarks", "tests"}:
            continue
        for name in listed_modules(description):
            under = ROOT / directory
            if not (list(under.rglob(f"{name}.py")) or any(p.is_dir() for p in under.rglob(name))):
                missing.append(f"{directory}{name}")
    assert missing == []
