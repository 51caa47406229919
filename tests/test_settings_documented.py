"""Every environment variable the code reads has a row in the README's settings table, and every
row names one it reads; the README's tuning table is the one mnemosyne/project/tuning.py prints:
neither table can drift from the declarations in code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from mnemosyne.project import tuning

ROOT = Path(__file__).resolve().parent.parent
# The typed readers of mnemosyne/project/env.py, called with the variable's name first.
READ = re.compile(r"\benv(?:str|bool|int|float|choice|list|counts)\(\s*\"([A-Z][A-Z0-9_]+)\"")
ROW = re.compile(r"^\| `([A-Z][A-Z0-9_]+)` \|", re.MULTILINE)
# Documented, and read from os.environ directly: DATABASE_URL and SECRET_KEY (settings.py, which
# also falls back on the local settings file), PROMETHEUS_MULTIPROC_DIR by prometheus-client itself.
READ_ELSEWHERE = {"DATABASE_URL", "SECRET_KEY", "PROMETHEUS_MULTIPROC_DIR"}


def read_by_the_code() -> set[str]:
    names: set[str] = set()
    for package in ("mnemosyne", "access", "mcp_server", "console"):
        for path in (ROOT / package).rglob("*.py"):
            names |= set(READ.findall(path.read_text(encoding="utf-8")))
    return names


def test_the_readme_settings_table_names_exactly_what_the_code_reads() -> None:
    rows = set(ROW.findall((ROOT / "README.md").read_text(encoding="utf-8")))
    code = read_by_the_code()
    assert sorted(code - rows) == [], "read by the code but missing from README.md's settings table"
    assert sorted(rows - code - READ_ELSEWHERE) == [], "in README.md's settings table but read nowhere"


def test_the_readme_tuning_table_is_the_one_the_declarations_print() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert tuning.markdown_table() in readme, "run `python -m mnemosyne.project.tuning` and paste its table"


def test_tuning_keys_read_as_their_settings_and_refuse_what_they_cannot_read() -> None:
    values = tuning.read_tuning("hnsw_ef_search=1000, bm25_b=0.5,hnsw_ef_search=200")
    assert values["SEARCH_HNSW_EF_SEARCH"] == 200 and values["SEARCH_BM25_B"] == 0.5  # the last one given
    assert values["SEARCH_BM25_K1"] == tuning.KNOBS["bm25_k1"].default
    assert (
        tuning.read_tuning("")
        == tuning.read_tuning(None)
        == {knob.setting: knob.default for knob in tuning.KNOBS.values()}
    )
    for bad, says in [
        ("hnsw_ef_search", "key=value pairs"),
        ("ef=3", "key=value pairs"),
        ("hnsw_ef_search=1.5", "must be an integer"),
        ("bm25_b=2", "between 0.0 and 1.0"),
    ]:
        with pytest.raises(ImproperlyConfigured, match=says):
            tuning.read_tuning(bad)
