"""The data files profiles ship with (mnemosyne/profiles/data/): synonym sets and instruction phrases."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def shipped_names() -> list[str]:
    return sorted(path.stem for path in DATA.glob("*.txt"))


def shipped_text(name: str) -> str:
    """The text of the shipped file `name` (KeyError when there is none)."""
    path = DATA / f"{name}.txt"
    if name not in shipped_names():
        raise KeyError(name)
    return path.read_text(encoding="utf-8")
