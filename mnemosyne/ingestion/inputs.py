"""Finding the files and URLs an ingest run covers, and naming them stably."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

# "scheme://…": a URL, not a path (http and https are fetched; any other scheme is refused).
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True)
class InputFile:
    path: Path
    # Stable identity of the item: the path relative to the parent of the root it was found under,
    # so `ingest docs` names files "docs/…" from whichever directory it is run.
    source: str


@dataclass(frozen=True)
class Skipped:
    path: Path
    reason: str


@dataclass
class Inputs:
    """What the command line names: files found, URLs, what was passed over, the directories walked."""

    files: list[InputFile] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    directories: list[Path] = field(default_factory=list)


def too_large(size: int) -> str | None:
    """Why a file of `size` bytes is skipped (over INGEST_MAX_FILE_BYTES), or None: checked before
    it is read, by every walk and every source."""
    limit = settings.INGEST_MAX_FILE_BYTES
    return f"{size} bytes is over INGEST_MAX_FILE_BYTES ({limit})" if size > limit else None


def is_url(argument: str | Path) -> bool:
    return isinstance(argument, str) and _URL.match(argument) is not None


def collect_inputs(
    arguments: Sequence[str | Path],
    suffixes: set[str],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Inputs:
    """Split arguments into URLs and paths, and walk the paths (see `discover`)."""
    inputs = Inputs()
    paths: list[Path] = []
    for argument in arguments:
        if is_url(argument):
            inputs.urls.append(str(argument))
        else:
            paths.append(Path(argument))
    inputs.directories = [path.resolve() for path in paths if path.is_dir()]
    for entry in discover(paths, suffixes, include=include, exclude=exclude):
        if isinstance(entry, Skipped):
            inputs.skipped.append(entry)
        else:
            inputs.files.append(entry)
    return inputs


def discover(
    roots: Sequence[Path],
    suffixes: set[str],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Iterator[InputFile | Skipped]:
    """Yield every file under `roots` (sorted), or why it is passed over.

    In a directory walk, hidden files and directories are ignored, and so are files that match an
    `exclude` glob or, when `include` globs are given, match none of them (see `matches_glob`).
    A file named on its own is always considered.
    """
    for root in roots:
        if not root.exists():
            yield Skipped(root, "no such file or directory")
            continue
        resolved_root = root.resolve()
        base = resolved_root.parent
        if resolved_root.is_file():
            yield _classify(resolved_root, resolved_root, base, suffixes, explicit=True)
            continue
        for path in _walk(resolved_root, include, exclude):
            yield _classify(path, resolved_root, base, suffixes, explicit=False)


def _walk(root: Path, include: Sequence[str], exclude: Sequence[str]) -> list[Path]:
    found: list[Path] = []
    # Symlinked directories are not entered (followlinks=False) and never reach `filenames`.
    for directory, dirnames, filenames in os.walk(root):
        here = Path(directory)
        relative_dir = here.relative_to(root).as_posix()
        prefix = "" if relative_dir == "." else f"{relative_dir}/"
        # Pruned in place: a hidden or excluded directory is never walked.
        dirnames[:] = [
            name
            for name in dirnames
            if not name.startswith(".") and not any(matches_glob(p, prefix + name) for p in exclude)
        ]
        for name in filenames:
            relative = prefix + name
            if name.startswith("."):
                continue
            if any(matches_glob(pattern, relative) for pattern in exclude):
                continue
            if include and not any(matches_glob(pattern, relative) for pattern in include):
                continue
            found.append(here / name)
    return sorted(found)


def matches_glob(pattern: str, relative_path: str) -> bool:
    """Whether a glob matches a '/'-separated path relative to the walked root, or a directory above it.

    `*`, `?` and `[…]` stay within one path segment, `**` spans any number of directories
    (`drafts/**`, `**/*.md`). As in .gitignore, a pattern without a '/' (other than a trailing one)
    is tried against each name along the path (`*.md` matches `a/b.md`, `drafts` everything under
    any `drafts/` directory); one with a '/' is anchored at the root (`/drafts`, `docs/*.md`);
    and a pattern that matches a directory matches everything under it.
    """
    anchored = "/" in pattern.strip().rstrip("/")
    pattern = pattern.strip().strip("/")
    if not pattern:
        return False
    regex = _compile_glob(pattern)
    parts = relative_path.strip("/").split("/")
    if not anchored:
        return any(regex.fullmatch(part) for part in parts)
    return any(regex.fullmatch("/".join(parts[:end])) for end in range(1, len(parts) + 1))


@functools.lru_cache(maxsize=256)
def _compile_glob(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")  # zero or more whole directories
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[" and (end := _class_end(pattern, i)) > i:
            body = pattern[i + 1 : end]
            negate = body.startswith(("!", "^"))
            body = body[1:] if negate else body
            # Ranges ("a-z") keep their '-'; everything else in the class is literal.
            members = "".join(c if c == "-" else re.escape(c) for c in body)
            out.append(f"[{'^/' if negate else ''}{members}]")
            i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return re.compile("".join(out))


def _class_end(pattern: str, start: int) -> int:
    """Index of the `]` closing the class opened at `start`, or -1 when it is a literal `[`."""
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    return pattern.find("]", i)


def _classify(
    path: Path, root: Path, base: Path, suffixes: set[str], *, explicit: bool
) -> InputFile | Skipped:
    target = path.resolve()
    # Symlinks that lead outside the root are not followed.
    if target != path and not target.is_relative_to(root) and not explicit:
        return Skipped(path, "symlink leads outside the ingested directory")
    if path.suffix.lower() not in suffixes:
        return Skipped(path, f"unsupported file type {path.suffix or '(none)'!r}")
    return InputFile(path=path, source=path.relative_to(base).as_posix())
