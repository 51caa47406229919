"""Finding the files an ingest run covers, and naming them stably."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SourceFile:
    path: Path
    # Stable identity of the item: the path relative to the parent of the root it was found under,
    # so `ingest docs` names files "docs/…" from whichever directory it is run.
    source: str


@dataclass(frozen=True)
class Skipped:
    path: Path
    reason: str


def discover(roots: Sequence[Path], suffixes: set[str]) -> Iterator[SourceFile | Skipped]:
    """Yield every file under `roots` (sorted), or why it is passed over."""
    for root in roots:
        if not root.exists():
            yield Skipped(root, "no such file or directory")
            continue
        resolved_root = root.resolve()
        base = resolved_root.parent
        if resolved_root.is_file():
            yield _classify(resolved_root, resolved_root, base, suffixes, explicit=True)
            continue
        for path in sorted(resolved_root.rglob("*")):
            relative_parts = path.relative_to(resolved_root).parts
            if any(part.startswith(".") for part in relative_parts):
                continue
            if path.is_dir():
                continue
            yield _classify(path, resolved_root, base, suffixes, explicit=False)


def _classify(
    path: Path, root: Path, base: Path, suffixes: set[str], *, explicit: bool
) -> SourceFile | Skipped:
    target = path.resolve()
    # Symlinks that lead outside the root are not followed.
    if target != path and not target.is_relative_to(root) and not explicit:
        return Skipped(path, "symlink leads outside the ingested directory")
    if path.suffix.lower() not in suffixes:
        return Skipped(path, f"unsupported file type {path.suffix or '(none)'!r}")
    return SourceFile(path=path, source=path.relative_to(base).as_posix())
