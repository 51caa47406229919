"""Whether a host is on the public internet: what the server fetches on a user's word (a URL to
ingest, an OAuth client's metadata document) must not reach this machine or its private network
(cloud metadata services, databases, admin consoles) unless a setting allows it."""

from __future__ import annotations

import ipaddress
import socket


class PrivateAddress(Exception):
    """The host resolves to an address that is not public; the message names it."""


def is_public_address(address: str) -> bool:
    """Whether an IP address is on the public internet (not loopback, private, link-local, …)."""
    ip = ipaddress.ip_address(address)
    return ip.is_global and not ip.is_multicast


def check_public_host(host: str, port: int = 443) -> None:
    """Raise PrivateAddress unless every address `host` resolves to is public (OSError if it does not
    resolve). The connection made afterwards resolves again: this narrows, not closes, the window
    for a name that changes its answer in between."""
    host = host.strip("[]")
    infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    for address in sorted({str(info[4][0]) for info in infos}):
        if not is_public_address(address):
            raise PrivateAddress(f"{host} resolves to a private or loopback address ({address})")
