"""Who is calling, resolved once per request from its credential (identify.py) and handed to every
handler: scopes, tool whitelist, and the libraries it may read and change now (library_access.py)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from access.models import MCPToken


class Kind(enum.StrEnum):
    TOKEN = "token"
    JWT = "jwt"
    # An access token of the built-in OAuth authorization server (access/oauth).
    OAUTH = "oauth"
    # A person signed in to this server's pages (the admin, the console) with a browser session.
    SESSION = "session"
    ANONYMOUS = "anonymous"
    # The operator on this machine: stdio with --local, or HTTP with MCP_REQUIRE_AUTH=false.
    LOCAL = "local"


@dataclass(frozen=True)
class Principal:
    kind: Kind
    # Who, in audit rows: the username (token owner, OAuth user), "jwt:<sub>", "anonymous" or "local".
    actor: str
    scopes: frozenset[str]
    token: MCPToken | None = None
    # Which caller an approval belongs to when there is no token row: "jwt:<sub>", "oauth:<grant>",
    # "anonymous".
    subject: str = ""
    # The library ids it may see, resolved when it was identified; None: every library.
    library_ids: frozenset[int] | None = None
    # The library ids it may change (within those it sees); None: every one it sees.
    editable_ids: frozenset[int] | None = None
    # The library ids it manages (their evaluation sets and runs): none unless a role says so; None:
    # every one it sees (the local operator).
    managed_ids: frozenset[int] | None = frozenset()

    @property
    def is_anonymous(self) -> bool:
        return self.kind == Kind.ANONYMOUS

    def allows_tool(self, tool: str) -> bool:
        return self.token is None or self.token.allows_tool(tool)

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes

    def sees(self, library_id: int) -> bool:
        return self.library_ids is None or library_id in self.library_ids

    def may_change(self, library_id: int) -> bool:
        return self.sees(library_id) and (self.editable_ids is None or library_id in self.editable_ids)

    def manages(self, library_id: int) -> bool:
        return self.sees(library_id) and (self.managed_ids is None or library_id in self.managed_ids)

    @property
    def caller_key(self) -> str:
        """Which caller this is, for what belongs to it (an upload it queued): the same token, the
        same JWT subject or OAuth grant, else who it acts as ("local", "anonymous")."""
        if self.token is not None:
            return f"token:{self.token.pk}"
        return self.subject or self.actor
