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
from mnemosyne.project.env import envbool, envchoice, envcounts, envfloat, envint, envlist, envstr

BASE_DIR = Path(__file__).resolve().parents[2]
# Tuning internals (project/tuning.py): one variable, TUNING="key=value,…", sets any of them; each
# is read below as the setting it has always been.
TUNED = tuning.from_environment()
LOCAL_SETTINGS_FILE = local_settings.load()

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

MCP_REQUIRE_AUTH = envbool("MCP_REQUIRE_AUTH", True)
# Origins a browser-based MCP client may send (DNS-rebinding check);
# empty: http(s) on any port of ALLOWED_HOSTS.
MCP_ALLOWED_ORIGINS = envlist("MCP_ALLOWED_ORIGINS", [])
# Largest MCP request body in bytes (413 above); bounds upsert_item uploads, base64 adding a third.
MCP_MAX_REQUEST_BODY_BYTES = envint("MCP_MAX_REQUEST_BODY_BYTES", 4 * 1024 * 1024, minimum=1024)
# External base URL (https://mcp.example.com) for the protected-resource metadata a 401 points at;
# empty: the request's scheme and Host.
MCP_PUBLIC_BASE_URL = envstr("MCP_PUBLIC_BASE_URL", "")
# Bearer JWTs from an identity provider (off unless MCP_JWT_ISSUER is set): a token that is not one
# of ours (mnem_…) is checked against the IdP's JWKS, its issuer and audience (see docs/operations.md).
MCP_JWT_ISSUER = envstr("MCP_JWT_ISSUER", "").strip()
MCP_JWT_AUDIENCE = envstr("MCP_JWT_AUDIENCE", "").strip()
MCP_JWT_JWKS_URL = envstr("MCP_JWT_JWKS_URL", "").strip()
# Asymmetric only: a shared-secret (HS*) or "none" algorithm would let a JWKS key be used as a secret.
_JWT_ASYMMETRIC = {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
# Named in any case ("rs256", "EDDSA"), as PyJWT spells them.
MCP_JWT_ALGORITHMS = [
    {name.upper(): name for name in _JWT_ASYMMETRIC}.get(name.upper(), name)
    for name in envlist("MCP_JWT_ALGORITHMS", ["RS256", "ES256"])
]
MCP_JWT_SCOPE_CLAIM = envstr("MCP_JWT_SCOPE_CLAIM", "scope").strip()
MCP_JWT_LIBRARIES_CLAIM = envstr("MCP_JWT_LIBRARIES_CLAIM", "mnemosyne_libraries").strip()
MCP_JWT_JWKS_CACHE_SECONDS = envint("MCP_JWT_JWKS_CACHE_SECONDS", 300, minimum=1, maximum=86_400)
# An unknown key id refetches the JWKS (key rotation) at most this often, so bogus kids cannot flood the IdP.
MCP_JWT_JWKS_MIN_REFETCH_SECONDS = int(TUNED["MCP_JWT_JWKS_MIN_REFETCH_SECONDS"])
MCP_JWT_HTTP_TIMEOUT = envfloat("MCP_JWT_HTTP_TIMEOUT", 3.0, minimum=0.1, maximum=60.0)
MCP_JWT_LEEWAY_SECONDS = envint("MCP_JWT_LEEWAY_SECONDS", 30, minimum=0, maximum=600)
if MCP_JWT_ISSUER and not (MCP_JWT_AUDIENCE and MCP_JWT_JWKS_URL):
    raise ImproperlyConfigured("MCP_JWT_ISSUER needs MCP_JWT_AUDIENCE and MCP_JWT_JWKS_URL")
if not set(MCP_JWT_ALGORITHMS) <= _JWT_ASYMMETRIC or not MCP_JWT_ALGORITHMS:
    raise ImproperlyConfigured(
        f"MCP_JWT_ALGORITHMS must name asymmetric algorithms ({', '.join(sorted(_JWT_ASYMMETRIC))}), "
        f"got {MCP_JWT_ALGORITHMS!r}"
    )
# OAuth authorization servers listed in that metadata (issuer URLs); default: the JWT issuer, if any.
MCP_AUTHORIZATION_SERVERS = envlist("MCP_AUTHORIZATION_SERVERS", [MCP_JWT_ISSUER] if MCP_JWT_ISSUER else [])
# OAuth 2.1 sign-in with Mnemosyne as its own authorization server (access/oauth): "builtin", or
# "off". Its issuer is MCP_PUBLIC_BASE_URL (else http://127.0.0.1:PORT); users sign in with their
# Django account at /oauth/login/ and consent to scopes and libraries.
MCP_OAUTH = envchoice("MCP_OAUTH", "off", ["off", "builtin"])
MCP_OAUTH_ACCESS_TOKEN_SECONDS = envint("MCP_OAUTH_ACCESS_TOKEN_SECONDS", 3600, minimum=60, maximum=86_400)
MCP_OAUTH_REFRESH_TOKEN_SECONDS = envint(
    "MCP_OAUTH_REFRESH_TOKEN_SECONDS", 30 * 86_400, minimum=3600, maximum=365 * 86_400
)
# Client ID metadata documents (a client_id that is an https URL) are fetched only from public
# addresses unless this is on (an intranet whose clients publish their documents internally).
MCP_OAUTH_PRIVATE_CLIENT_DOCUMENTS = envbool("MCP_OAUTH_PRIVATE_CLIENT_DOCUMENTS", False)
# Who may see which library (access/library_access.py): "open" (every active user reads
# every library; a token's scopes decide writes) or "grants" (a person reaches only the libraries
# granted to them or their groups: manage.py grant, the admin; superusers everything). The policy is
# the one recorded in the database (manage.py access_policy); this is only a fresh database's first
# choice, and a server whose value disagrees with the record refuses to start. Unset ("") follows
# the record (open when none).
LIBRARY_ACCESS = (
    envchoice("LIBRARY_ACCESS", "open", ["open", "grants"]) if envstr("LIBRARY_ACCESS", "") else ""
)
# Single sign-on (access/single_sign_on.py), on when OIDC_ISSUER is set: people sign in to
# the admin, the OAuth consent page and the console with the organisation's OpenID Connect provider.
OIDC_ISSUER = envstr("OIDC_ISSUER", "").strip()
# Default: OIDC_ISSUER + /.well-known/openid-configuration.
OIDC_DISCOVERY_URL = envstr("OIDC_DISCOVERY_URL", "").strip()
OIDC_CLIENT_ID = envstr("OIDC_CLIENT_ID", "").strip()
# Empty: a public client (PKCE alone); else sent with HTTP basic authentication.
OIDC_CLIENT_SECRET = envstr("OIDC_CLIENT_SECRET", "")
OIDC_SCOPES = envlist("OIDC_SCOPES", ["openid", "email", "profile"])
OIDC_USERNAME_CLAIM = envstr("OIDC_USERNAME_CLAIM", "preferred_username").strip()
# A list of group names; each sign-in sets the person's provider-managed Django groups to it.
OIDC_GROUPS_CLAIM = envstr("OIDC_GROUPS_CLAIM", "groups").strip()
# Provider groups whose members get the admin (staff) or everything (superuser); empty: left alone.
OIDC_STAFF_GROUPS = envlist("OIDC_STAFF_GROUPS", [])
OIDC_SUPERUSER_GROUPS = envlist("OIDC_SUPERUSER_GROUPS", [])
OIDC_PROVIDER_NAME = envstr("OIDC_PROVIDER_NAME", "your organisation")
OIDC_HTTP_TIMEOUT = envfloat("OIDC_HTTP_TIMEOUT", 5.0, minimum=0.1, maximum=60.0)
# false: only single sign-on (local password forms are hidden and refused).
OIDC_LOCAL_PASSWORDS = envbool("OIDC_LOCAL_PASSWORDS", True)
if OIDC_ISSUER and not OIDC_CLIENT_ID:
    raise ImproperlyConfigured("OIDC_ISSUER needs OIDC_CLIENT_ID")
if not OIDC_LOCAL_PASSWORDS and not OIDC_ISSUER:
    raise ImproperlyConfigured("OIDC_LOCAL_PASSWORDS=false needs OIDC_ISSUER (nobody could sign in)")
AUTHENTICATION_BACKENDS = (["django.contrib.auth.backends.ModelBackend"] if OIDC_LOCAL_PASSWORDS else []) + [
    "access.single_sign_on.SessionOnly"
]
# Without a token, read tools and resources may be used (scope read only), optionally only within
# these library uids. Off by default; write tools always need a token.
MCP_ANONYMOUS_READ = envbool("MCP_ANONYMOUS_READ", False)
MCP_ANONYMOUS_LIBRARIES = envlist("MCP_ANONYMOUS_LIBRARIES", [])
# Tools that run only once an administrator approves the exact call (e.g. "delete_item").
MCP_APPROVAL_REQUIRED_TOOLS = envlist("MCP_APPROVAL_REQUIRED_TOOLS", [])
# Abuse limits (access/throttles.py), per minute, shared by every worker: calls of one tool by
# one caller (the local operator excepted); failed authentications, and failed admin logins, from
# one client address. 0 switches a limit off.
MCP_TOOL_RATE_LIMITS = envcounts("MCP_TOOL_RATE_LIMITS", {"upsert_item": 30, "delete_item": 30})
# Changes one person makes through the console in a minute (uploads, deletions, re-reads), its own
# door's limit: apart from the tools' above (0 switches it off).
CONSOLE_CHANGES_PER_MINUTE = envint("CONSOLE_CHANGES_PER_MINUTE", 60, minimum=0)
# A server-sent event stream (GET /mcp/, /mcp/sse/) that carries nothing but keep-alive pings for
# this long is closed (0: never).
MCP_STREAM_IDLE_SECONDS = envint("MCP_STREAM_IDLE_SECONDS", 600, minimum=0)
# A stream opened without a credential (listing tools needs none) is closed after this long, idle
# or not (0: never).
MCP_STREAM_UNAUTHENTICATED_SECONDS = envint("MCP_STREAM_UNAUTHENTICATED_SECONDS", 60, minimum=0)
# Load shedding (mcp_server/transports/admission.py): calls that do work (tools, resource reads,
# prompts, completions) one server process works on at once over streamable HTTP (0: no bound), and
# how many more may queue for a place; a call that finds the queue full is answered 503 busy at once.
MCP_MAX_CALLS = envint("MCP_MAX_CALLS", 32, minimum=0)
MCP_MAX_WAITING_CALLS = envint("MCP_MAX_WAITING_CALLS", 64, minimum=0)
MCP_AUTH_FAILURES_PER_MINUTE = envint("MCP_AUTH_FAILURES_PER_MINUTE", 20, minimum=0)
ADMIN_LOGIN_FAILURES_PER_MINUTE = envint("ADMIN_LOGIN_FAILURES_PER_MINUTE", 5, minimum=0)
CHUNK_STORE = envchoice("CHUNK_STORE", "filesystem", ("filesystem", "s3"))
# S3-compatible object storage (AWS S3, MinIO, R2) when CHUNK_STORE=s3. Credentials come from
# AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or the usual boto3 chain).
S3_BUCKET = envstr("S3_BUCKET", "")
S3_PREFIX = envstr("S3_PREFIX", "mnemosyne/")
S3_ENDPOINT_URL = envstr("S3_ENDPOINT_URL", "") or None
S3_REGION = envstr("S3_REGION", "us-east-1")
S3_CONNECT_TIMEOUT = envfloat("S3_CONNECT_TIMEOUT", 3.0, minimum=0.1, maximum=60.0)
S3_READ_TIMEOUT = envfloat("S3_READ_TIMEOUT", 5.0, minimum=0.1, maximum=300.0)
# Where S3 sources (add_source s3://bucket/prefix) are read from: empty is AWS; credentials come
# from the usual places (environment, ~/.aws, an instance role).
SOURCES_S3_ENDPOINT_URL = envstr("SOURCES_S3_ENDPOINT_URL", "") or None
S3_MAX_ATTEMPTS = int(TUNED["S3_MAX_ATTEMPTS"])
if CHUNK_STORE == "s3" and not S3_BUCKET:
    raise ImproperlyConfigured("S3_BUCKET is required when CHUNK_STORE=s3")
GRAPH_BACKEND = envchoice("GRAPH_BACKEND", "postgres", ("postgres", "neo4j"))
# The Neo4j server when GRAPH_BACKEND=neo4j (a projection of the graph tables, fed after commit).
NEO4J_URI = envstr("NEO4J_URI", "").strip()
NEO4J_USER = envstr("NEO4J_USER", "neo4j")
NEO4J_PASSWORD = envstr("NEO4J_PASSWORD", "")
NEO4J_DATABASE = envstr("NEO4J_DATABASE", "").strip() or None
_NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
if GRAPH_BACKEND == "neo4j" and not NEO4J_URI:
    raise ImproperlyConfigured("NEO4J_URI is required when GRAPH_BACKEND=neo4j")
if NEO4J_URI and NEO4J_URI.split("://", 1)[0].lower() not in _NEO4J_SCHEMES:
    raise ImproperlyConfigured(
        f"NEO4J_URI must start with one of {', '.join(s + '://' for s in _NEO4J_SCHEMES)}"
    )
# "all-MiniLM-L6-v2" is the bundled model (checksum verified at load); anything else is a path to a
# local sentence-transformers model directory, or with EMBEDDING_URL the remote model's name.
EMBEDDING_MODEL = envstr("EMBEDDING_MODEL", "all-MiniLM-L6-v2")
# An OpenAI-compatible embeddings endpoint (OpenAI, TEI, vLLM, …: POST {URL}/embeddings) instead of
# the local model; EMBEDDING_MODEL then names the remote model (mnemosyne/embedding/remote.py).
EMBEDDING_URL = envstr("EMBEDDING_URL", "")
EMBEDDING_API_KEY = envstr("EMBEDDING_API_KEY", "")
EMBEDDING_TIMEOUT = envfloat("EMBEDDING_TIMEOUT", 30.0, minimum=0.1, maximum=600.0)
# The remote model's window in tokens (chunks are far shorter: CHUNK_MAX_TOKENS).
EMBEDDING_MAX_TOKENS = envint("EMBEDDING_MAX_TOKENS", 512, minimum=16, maximum=131_072)
EMBEDDING_BATCH_SIZE = envint("EMBEDDING_BATCH_SIZE", 16, minimum=1, maximum=1024)
# Single queries run on ONNX Runtime ("onnx": the model's transformer exported once into
# EMBEDDING_CACHE_DIR and checked against torch at every load), on its int8 form like ingest
# batches ("onnx-int8": cheaper, and rankings move a little — docs/benchmarks.md) or on torch like
# batches ("torch").
EMBEDDING_QUERY_BACKEND = envchoice("EMBEDDING_QUERY_BACKEND", "onnx", ("onnx", "onnx-int8", "torch"))
# Ingest batches run on ONNX Runtime with int8 weights ("onnx-int8": the exported graph quantized
# once, one single-threaded session per core, embedding/document_encoder.py; its speed and quality
# against torch's: docs/benchmarks.md) or on torch ("torch").
EMBEDDING_DOCUMENT_BACKEND = envchoice("EMBEDDING_DOCUMENT_BACKEND", "onnx-int8", ("onnx-int8", "torch"))
# One: a search embeds its query while the full-text leg keeps another core busy, and two threads
# then wait on each other (docs/benchmarks.md).
EMBEDDING_QUERY_THREADS = int(TUNED["EMBEDDING_QUERY_THREADS"])
# Queries that arrive while the model embeds others are embedded together, at most this many
# (embedding/query_batches.py); 1 embeds each alone.
EMBEDDING_QUERY_BATCH = int(TUNED["EMBEDDING_QUERY_BATCH"])
# Query vectors kept in each process for queries asked again (paging, retries); 0 keeps none.
EMBEDDING_QUERY_CACHE_SIZE = int(TUNED["EMBEDDING_QUERY_CACHE_SIZE"])
EMBEDDING_CACHE_DIR = (
    Path(envstr("EMBEDDING_CACHE_DIR", str(MNEMOSYNE_DATA_DIR / "models"))).expanduser().resolve()
)
CHUNK_MAX_TOKENS = envint("CHUNK_MAX_TOKENS", 200, minimum=16, maximum=512)
CHUNK_OVERLAP_TOKENS = envint("CHUNK_OVERLAP_TOKENS", 40, minimum=0, maximum=256)
# A section (a heading and what follows it) up to this many tokens stays one chunk, so an
# explanation keeps its example; longer ones, and text under no heading, are cut at
# CHUNK_MAX_TOKENS. 0 turns this off. The vector of a chunk longer than the model's window (256
# tokens for MiniLM) sees its opening; the full-text index sees all of it.
CHUNK_SECTION_TOKENS = int(TUNED["CHUNK_SECTION_TOKENS"])
if CHUNK_OVERLAP_TOKENS >= CHUNK_MAX_TOKENS:
    raise ImproperlyConfigured("CHUNK_OVERLAP_TOKENS must be smaller than CHUNK_MAX_TOKENS")
# OCR (rapidocr-onnxruntime, offline) for PDF pages without a usable text layer and for image files:
# "auto" (pages whose text layer is empty or garbage), "off", or "force" (every page, every image).
OCR = envchoice("OCR", "auto", ("auto", "off", "force"))
# Resolution pages are read at for OCR; a scan of lower resolution is enlarged to it first
# (word accuracy on 300 and 150 dpi scans: docs/benchmarks.md, "OCR").
OCR_DPI = int(TUNED["OCR_DPI"])
INGEST_MAX_FILE_BYTES = envint("INGEST_MAX_FILE_BYTES", 50 * 1024 * 1024, minimum=1)
# Every parse runs in a parser child process (mnemosyne/ingestion/parser_processes.py) under these
# bounds: the child's heap, and each parse's CPU time (more for each PDF page read by OCR); a parse
# that meets one fails its document in one line. At most this many parser children per process.
INGEST_PARSE_PROCESSES = envint("INGEST_PARSE_PROCESSES", 2, minimum=1, maximum=64)
# (OCR of a large scanned page or slide holds up to about 1.9 GiB resident at its peak, and more
# address space for its data.)
INGEST_PARSE_MEMORY_MB = envint("INGEST_PARSE_MEMORY_MB", 3072, minimum=256, maximum=65_536)
INGEST_PARSE_CPU_SECONDS = envint("INGEST_PARSE_CPU_SECONDS", 120, minimum=5, maximum=86_400)
# (A dense page read by OCR at 300 dpi takes about 50 s of CPU on its two threads: 7 such pages of
# a 20-page annual report, 343 s.)
INGEST_PARSE_CPU_SECONDS_PER_PAGE = envint("INGEST_PARSE_CPU_SECONDS_PER_PAGE", 90, minimum=0, maximum=600)
# What a document may hold: PDF pages read (the first ones), an office file's or e-book's size once
# unpacked (a zip bomb), how deep a web page's elements nest.
INGEST_MAX_PAGES = envint("INGEST_MAX_PAGES", 5000, minimum=1)
INGEST_MAX_UNPACKED_BYTES = envint("INGEST_MAX_UNPACKED_BYTES", 512 * 1024 * 1024, minimum=1024)
INGEST_MAX_NESTING = envint("INGEST_MAX_NESTING", 1000, minimum=16, maximum=100_000)
# upsert_item queues a document larger than this for a background worker and returns a job id.
UPSERT_BACKGROUND_BYTES = envint("UPSERT_BACKGROUND_BYTES", 1024 * 1024, minimum=0)
# Seconds allowed to connect to, and between reads from, a URL given to `ingest`, and for the whole body.
# URLs to ingest that resolve to loopback, private or link-local addresses (this machine, its
# network, a cloud metadata service) are refused unless this is on.
INGEST_ALLOW_PRIVATE_URLS = envbool("INGEST_ALLOW_PRIVATE_URLS", False)
INGEST_FETCH_TIMEOUT = envfloat("INGEST_FETCH_TIMEOUT", 10.0, minimum=0.1, maximum=600.0)
LOG_LEVEL = envchoice("LOG_LEVEL", "info", ("debug", "info", "warning", "error")).upper()
SEARCH_HNSW_EF_SEARCH = int(TUNED["SEARCH_HNSW_EF_SEARCH"])
# Fusion of the legs: "rrf" (reciprocal rank fusion, k = SEARCH_RRF_K) or "relative" (min-max
# normalised scores, vector weighted by SEARCH_ALPHA, full text by 1 - SEARCH_ALPHA).
# Defaults chosen on BEIR SciFact's train split (docs/benchmarks.md): relative fusion at alpha 0.5
# beat RRF; the graph leg added nothing measurable, so its weight is 0 and it runs only when asked
# for alone or given a weight.
SEARCH_FUSION = envchoice("SEARCH_FUSION", "relative", ("rrf", "relative"))
SEARCH_RRF_K = int(TUNED["SEARCH_RRF_K"])
SEARCH_ALPHA = envfloat("SEARCH_ALPHA", 0.5, minimum=0.0, maximum=1.0)
SEARCH_GRAPH_WEIGHT = envfloat("SEARCH_GRAPH_WEIGHT", 0.0, minimum=0.0, maximum=1.0)
SEARCH_GRAPH_HOPS = int(TUNED["SEARCH_GRAPH_HOPS"])
# Reranking (off unless configured): an HTTP /rerank endpoint (TEI, Cohere or Jina style)
# or a local cross-encoder directory.
RERANK_URL = envstr("RERANK_URL", "")
RERANK_PROTOCOL = envchoice("RERANK_PROTOCOL", "tei", ("tei", "cohere"))
RERANK_API_KEY = envstr("RERANK_API_KEY", "")
RERANK_MODEL = envstr("RERANK_MODEL", "")
RERANK_MODEL_PATH = envstr("RERANK_MODEL_PATH", "")
RERANK_TIMEOUT = envfloat("RERANK_TIMEOUT", 5.0, minimum=0.1, maximum=120.0)
RERANK_TOP_N = envint("RERANK_TOP_N", 50, minimum=1, maximum=500)
if RERANK_URL and RERANK_MODEL_PATH:
    raise ImproperlyConfigured("set RERANK_URL or RERANK_MODEL_PATH, not both")
# Days the query log keeps each tool call (query_log.py, the console's activity views); 0 keeps
# none and writes none. A library can opt out (Library.log_queries).
QUERY_LOG_DAYS = envint("QUERY_LOG_DAYS", 30, minimum=0, maximum=3650)
# A call's row written by the log's own thread, with the rows of the calls made meanwhile (the
# call's answer waits for no INSERT); false writes it before the call answers, so that it is
# there the moment the answer is (mnemosyne/library/query_log.py).
QUERY_LOG_BACKGROUND = envbool("QUERY_LOG_BACKGROUND", True)
# Search results are cut to about this many tokens per response (clients cap tool results,
# e.g. at 25,000 tokens); the rest is reachable with next_cursor.
SEARCH_RESPONSE_TOKEN_BUDGET = envint("SEARCH_RESPONSE_TOKEN_BUDGET", 8000, minimum=500, maximum=100_000)
SEARCH_BM25_K1 = float(TUNED["SEARCH_BM25_K1"])
SEARCH_BM25_B = float(TUNED["SEARCH_BM25_B"])
# Postings read per query term, strongest first (see Posting.impact): bounds the full-text leg's
# cost at any corpus size. Measured on SciFact in docs/benchmarks.md.
SEARCH_BM25_TERM_POSTINGS = int(TUNED["SEARCH_BM25_TERM_POSTINGS"])
# The best candidates from those postings are then scored over all their query terms' postings.
SEARCH_BM25_RESCORE = int(TUNED["SEARCH_BM25_RESCORE"])
# Query terms scored, the rarest (highest IDF) first: a long text as a query costs what a sentence does.
SEARCH_BM25_MAX_QUERY_TERMS = int(TUNED["SEARCH_BM25_MAX_QUERY_TERMS"])

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
