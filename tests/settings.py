"""Test settings: the real settings, with a data directory of the tests' own."""

import os
import tempfile
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("MNEMOSYNE_DATA_DIR", str(_ROOT / ".mnemosyne-test"))
os.environ.setdefault("DEBUG", "true")
# One exported query encoder for every test process and the servers they start (their data
# directories differ).
os.environ.setdefault("EMBEDDING_CACHE_DIR", str(_ROOT / ".mnemosyne-test-models"))
os.environ.setdefault("LOG_LEVEL", "warning")
# The tests' temporary files (pytest's tmp_path among them) outside the checkout: a test's folder
# must not sit inside a git repository, nor its sockets' paths grow past the kernel's limit.
os.environ.setdefault(
    "MNEMOSYNE_TMP_DIR", str(Path(tempfile.gettempdir()) / f"mnemosyne-tests-{os.getuid()}")
)
# No local settings file: the tests (and the servers and commands they start) see only what they set.
os.environ.setdefault("MNEMOSYNE_ENV_FILE", "off")
# The tests fetch from servers on 127.0.0.1; the private-address guard's own tests turn it back on.
os.environ.setdefault("INGEST_ALLOW_PRIVATE_URLS", "true")
# A call's query-log row is written before the call answers (the servers the tests start too): a
# row written afterwards by the log's thread could meet a test's teardown emptying every table
# (a deadlock on the library's row). The writer's own tests turn the thread back on.
os.environ.setdefault("QUERY_LOG_BACKGROUND", "false")

from mnemosyne.project.settings import *  # noqa: E402, F403

# People made by the tests get their passwords hashed in one round (tests/password_hashing.py).
PASSWORD_HASHERS = ["tests.password_hashing.OneRoundPBKDF2PasswordHasher"]
