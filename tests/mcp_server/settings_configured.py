"""An operator's profile for a uvicorn under test: explicit origins, smaller body and file limits.

Read with getattr defaults by mnemosyne.project.asgi and the tools, so it works before these names are in
mnemosyne/project/settings.py too.
"""

from mnemosyne.project.settings import *  # noqa: F403

MCP_ALLOWED_ORIGINS = ["https://app.example.com"]
MCP_MAX_REQUEST_BODY_BYTES = 1024 * 1024
INGEST_MAX_FILE_BYTES = 4096
