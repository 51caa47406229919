"""The settings of what is stored and how it is found: chunk storage, the concept graph, the
embedding model, chunking, OCR, ingest's bounds, search, reranking and the query log. Part of
mnemosyne/project/settings.py (which star-imports it after the local settings file is read; the
model cache's directory, under the data directory, is set there); every value from the environment.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from mnemosyne.project import tuning
from mnemosyne.project.env import envbool, envchoice, envfloat, envint, envstr

_TUNED = tuning.from_environment()  # as settings.py read it

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
S3_MAX_ATTEMPTS = int(_TUNED["S3_MAX_ATTEMPTS"])
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
EMBEDDING_QUERY_THREADS = int(_TUNED["EMBEDDING_QUERY_THREADS"])
# Queries that arrive while the model embeds others are embedded together, at most this many
# (embedding/query_batches.py); 1 embeds each alone.
EMBEDDING_QUERY_BATCH = int(_TUNED["EMBEDDING_QUERY_BATCH"])
# Query vectors kept in each process for queries asked again (paging, retries); 0 keeps none.
EMBEDDING_QUERY_CACHE_SIZE = int(_TUNED["EMBEDDING_QUERY_CACHE_SIZE"])
CHUNK_MAX_TOKENS = envint("CHUNK_MAX_TOKENS", 200, minimum=16, maximum=512)
CHUNK_OVERLAP_TOKENS = envint("CHUNK_OVERLAP_TOKENS", 40, minimum=0, maximum=256)
# A section (a heading and what follows it) up to this many tokens stays one chunk, so an
# explanation keeps its example; longer ones, and text under no heading, are cut at
# CHUNK_MAX_TOKENS. 0 turns this off. The vector of a chunk longer than the model's window (256
# tokens for MiniLM) sees its opening; the full-text index sees all of it.
CHUNK_SECTION_TOKENS = int(_TUNED["CHUNK_SECTION_TOKENS"])
if CHUNK_OVERLAP_TOKENS >= CHUNK_MAX_TOKENS:
    raise ImproperlyConfigured("CHUNK_OVERLAP_TOKENS must be smaller than CHUNK_MAX_TOKENS")
# OCR (rapidocr-onnxruntime, offline) for PDF pages without a usable text layer and for image files:
# "auto" (pages whose text layer is empty or garbage), "off", or "force" (every page, every image).
OCR = envchoice("OCR", "auto", ("auto", "off", "force"))
# Resolution pages are read at for OCR; a scan of lower resolution is enlarged to it first
# (word accuracy on 300 and 150 dpi scans: docs/benchmarks.md, "OCR").
OCR_DPI = int(_TUNED["OCR_DPI"])
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
SEARCH_HNSW_EF_SEARCH = int(_TUNED["SEARCH_HNSW_EF_SEARCH"])
# Fusion of the legs: "rrf" (reciprocal rank fusion, k = SEARCH_RRF_K) or "relative" (min-max
# normalised scores, vector weighted by SEARCH_ALPHA, full text by 1 - SEARCH_ALPHA).
# Defaults chosen on BEIR SciFact's train split (docs/benchmarks.md): relative fusion at alpha 0.5
# beat RRF; the graph leg added nothing measurable, so its weight is 0 and it runs only when asked
# for alone or given a weight.
SEARCH_FUSION = envchoice("SEARCH_FUSION", "relative", ("rrf", "relative"))
SEARCH_RRF_K = int(_TUNED["SEARCH_RRF_K"])
SEARCH_ALPHA = envfloat("SEARCH_ALPHA", 0.5, minimum=0.0, maximum=1.0)
SEARCH_GRAPH_WEIGHT = envfloat("SEARCH_GRAPH_WEIGHT", 0.0, minimum=0.0, maximum=1.0)
SEARCH_GRAPH_HOPS = int(_TUNED["SEARCH_GRAPH_HOPS"])
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
SEARCH_BM25_K1 = float(_TUNED["SEARCH_BM25_K1"])
SEARCH_BM25_B = float(_TUNED["SEARCH_BM25_B"])
# Postings read per query term, strongest first (see Posting.impact): bounds the full-text leg's
# cost at any corpus size. Measured on SciFact in docs/benchmarks.md.
SEARCH_BM25_TERM_POSTINGS = int(_TUNED["SEARCH_BM25_TERM_POSTINGS"])
# The best candidates from those postings are then scored over all their query terms' postings.
SEARCH_BM25_RESCORE = int(_TUNED["SEARCH_BM25_RESCORE"])
# Query terms scored, the rarest (highest IDF) first: a long text as a query costs what a sentence does.
SEARCH_BM25_MAX_QUERY_TERMS = int(_TUNED["SEARCH_BM25_MAX_QUERY_TERMS"])
