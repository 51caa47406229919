"""What `make run` prints to get in, kept between runs so a pasted client config and a remembered
sign-in keep working: the development token, and the console password of its user, each in one file
under the data directory, readable by its owner only (0600). Only these files hold them; the
database keeps their digests, as for every token and password."""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings

PATH_NAME = "dev-token"
PASSWORD_NAME = "dev-password"


def path(name: str = PATH_NAME) -> Path:
    return settings.MNEMOSYNE_DATA_DIR / name


def read(name: str = PATH_NAME) -> str | None:
    try:
        raw = path(name).read_text().strip()
    except OSError:
        return None
    return raw or None


def write(raw: str, name: str = PATH_NAME) -> None:
    """Replace the kept secret; the file is created 0600 and swapped in whole."""
    target = path(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{name}.partial")
    partial.unlink(missing_ok=True)
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(raw + "\n")
    os.replace(partial, target)
