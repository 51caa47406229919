"""The local settings file: `.env` beside manage.py (git-ignored), read before the settings are.

Every `manage.py` command then works in a fresh clone with nothing exported: on first use, unless
`DEBUG` is exported as false (a production start), the file is written with `DEBUG=true` and a
random `SECRET_KEY` (mode 0600). Its values apply only where the environment sets nothing: an
exported variable always wins. A production start with `DEBUG=false`, no `SECRET_KEY` and no
file still refuses (settings.py), in one line (manage.py).

`MNEMOSYNE_ENV_FILE` names another file, or `off` for none (the tests run without one).
Parsing is python-dotenv's (the usual `.env` syntax: comments, quotes, `export`).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from dotenv import dotenv_values

DEFAULT_PATH = Path(__file__).resolve().parents[2] / ".env"
_FALSE = {"0", "false", "no", "off"}

TEMPLATE = """\
# Mnemosyne's local settings for this checkout, written on first use (not in git).
# Exported environment variables win over these. Every variable: README.md, Configuration.
DEBUG=true
SECRET_KEY={secret}
"""


def path() -> Path | None:
    named = os.environ.get("MNEMOSYNE_ENV_FILE", "").strip()
    if named.lower() == "off":
        return None
    return Path(named).expanduser() if named else DEFAULT_PATH


def load() -> Path | None:
    """Create the file when this is a development start and it is missing; then apply it."""
    file = path()
    if file is None:
        return None
    if not file.exists() and _development_start():
        _create(file)
    if not file.exists():
        return None
    for name, value in dotenv_values(file).items():
        if value is not None:
            os.environ.setdefault(name, value)
    return file


def _development_start() -> bool:
    return os.environ.get("DEBUG", "").strip().lower() not in _FALSE


def _create(file: Path) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(TEMPLATE.format(secret=secrets.token_urlsafe(50)))
