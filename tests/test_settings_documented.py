"""Every environment variable the code reads has a row in the README's settings table, and every
row names one it reads: the table cannot drift from the declarations in code."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The typed readers of mnemosyne/project/env.py, called with the variable's name first.
READ = re.compile(r"\benv(?:str|bool|int|float|choice|list|counts)\(\s*\"([A-Z][A-Z0-9_]+)\"")
ROW = re.compile(r"^\| `([A-Z][A-Z0-9_]+)` \|", re.MULTILINE)
# Documented, and read from os.environ directly: DATABASE_URL and SECRET_KEY (settings.py, which
# also falls back on the local settings file), PROMETHEUS_MULTIPROC_DIR by prometheus-client itself.
READ_ELSEWHERE = {"DATABASE_URL", "SECRET_KEY", "PROMETHEUS_MULTIPROC_DIR"}


def read_by_the_code() -> set[str]:
    names: set[str] = set()
    for package in ("mnemosyne", "mcp_server"):
        for path in (ROOT / package).rglob("*.py"):
            names |= set(READ.findall(path.read_text(encoding="utf-8")))
    return names


def test_the_readme_settings_table_names_exactly_what_the_code_reads() -> None:
    rows = set(ROW.findall((ROOT / "README.md").read_text(encoding="utf-8")))
    code = read_by_the_code()
    assert sorted(code - rows) == [], "read by the code but missing from README.md's settings table"
    assert sorted(rows - code - READ_ELSEWHERE) == [], "in README.md's settings table but read nowhere"
