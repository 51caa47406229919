"""What deciding a caller costs per request: identify a bearer token and decide one `search` call
on a named library (access.decision.decide — what every transport runs once per request), under
LIBRARY_ACCESS=open and =grants, with 1 and 50 clients deciding at once (threads, each with its own
database connection, as the server's workers have).

The caller holds grants the way a team member does: reader on three libraries of twenty directly,
editor on two more through a group. Under `grants` the decision reads the owner's current grants
(one query) and the library the call names (one more); under `open` it reads neither. The
difference of the two medians is what the grant check adds to a request.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from benchmarks.results import AccessTiming, median

if TYPE_CHECKING:
    from access.decision import Asked

LIBRARIES = 20
CLIENTS = (1, 50)
DECISIONS = 2000  # per configuration, shared among its clients
WARMUP = 50


def run(log: Callable[[str], None]) -> list[AccessTiming]:
    from access.policy_switch import switch

    credential, asked = _caller()
    timings = []
    for policy in ("open", "grants"):
        # The policy recorded for the benchmark's own database, as an operator switches it.
        switch(policy, actor="bench")
        queries = _queries_per_decision(credential, asked)
        for clients in CLIENTS:
            log(f"access: {policy}, {clients} client(s)")
            timings.append(_timed(policy, clients, credential, asked, queries))
    switch("open", actor="bench")
    return timings


def _caller() -> tuple[str, Asked]:
    from django.contrib.auth.models import Group, User

    from access.decision import Asked
    from access.library_access import Role
    from access.library_grants import grant
    from access.services import create_token
    from benchmarks.database import BENCH_PREFIX
    from mcp_server.tools.catalog import spec_named
    from mnemosyne.library.services import ensure_library

    libraries = [ensure_library(name=f"{BENCH_PREFIX}access-{n:02d}") for n in range(LIBRARIES)]
    user, _ = User.objects.get_or_create(username=f"{BENCH_PREFIX}reader")
    team, _ = Group.objects.get_or_create(name=f"{BENCH_PREFIX}team")
    user.groups.add(team)
    for library in libraries[:3]:
        grant(library=library, role=Role.READER, user=user, actor="bench")
    for library in libraries[3:5]:
        grant(library=library, role=Role.EDITOR, group=team, actor="bench")
    _, raw = create_token(user=user, name=f"{BENCH_PREFIX}access-{time.time_ns()}")
    search = spec_named("search")
    asked = Asked(tool="search", spec=search, arguments={"query": "q", "library_uid": libraries[4].uid})
    return raw, asked


def _decide(credential: str, asked: Asked) -> None:
    from access.decision import Allowed, decide

    outcome = decide(credential, asked, transport="http")
    if not isinstance(outcome, Allowed):
        raise RuntimeError(f"the benchmark's caller was refused: {outcome}")


def _queries_per_decision(credential: str, asked: Asked) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    _decide(credential, asked)
    with CaptureQueriesContext(connection) as captured:
        _decide(credential, asked)
    return len(captured.captured_queries)


def _timed(policy: str, clients: int, credential: str, asked: Asked, queries: int) -> AccessTiming:
    from django.db import connection

    each = DECISIONS // clients
    times: list[list[float]] = [[] for _ in range(clients)]
    start = threading.Barrier(clients)

    def client(index: int) -> None:
        try:
            for _ in range(max(1, WARMUP // clients)):
                _decide(credential, asked)
            start.wait()
            for _ in range(each):
                began = time.perf_counter()
                _decide(credential, asked)
                times[index].append(time.perf_counter() - began)
        finally:
            connection.close()

    threads = [threading.Thread(target=client, args=(index,)) for index in range(clients)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    flat = sorted(t * 1e6 for per_client in times for t in per_client)
    if len(flat) != each * clients:
        raise RuntimeError("a benchmark client stopped early (see its traceback above)")
    return AccessTiming(
        policy=policy,
        clients=clients,
        decisions=len(flat),
        median_us=median(flat),
        p95_us=flat[int(0.95 * (len(flat) - 1))],
        per_second=len(flat) / wall,
        queries=queries,
    )
