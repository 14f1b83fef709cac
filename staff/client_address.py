"""The client's address: REMOTE_ADDR, or X-Forwarded-For only behind proxies configured by name.

Nothing in a request proves where it came from except the TCP peer (REMOTE_ADDR). A forwarded
header is believed only when that peer is one of `settings.PAYOPS_TRUSTED_PROXIES` (addresses or
CIDR networks, default none), and then only as far as the chain stays inside them: the header is
read from the right (the entries the trusted proxies appended themselves) and the first address
that is not a trusted proxy is the client (the rightmost-untrusted rule). Anything further left
was written by the client and may be anything.

`client_ip` is the one place the project reads a client address: django-axes
(`AXES_CLIENT_IP_CALLABLE`), the sign-in audit entries and the failed-sign-in notice use it.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest

type Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in entries)


def trusted_proxies() -> tuple[Network, ...]:
    """The configured proxies as networks (a bare address is a /32 or /128)."""
    return _networks(tuple(str(entry) for entry in getattr(settings, "PAYOPS_TRUSTED_PROXIES", [])))


def _parse(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    value = value.strip()
    if value.startswith("[") and "]" in value:  # [v6]:port
        value = value[1 : value.index("]")]
    elif value.count(":") == 1:  # v4:port
        value = value.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _is_trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return any(address in network for network in trusted_proxies())


def client_ip(request: HttpRequest) -> str:
    """The address the request came from, as a string ("" when the peer has no IP address)."""
    peer = _parse(str(request.META.get("REMOTE_ADDR") or ""))
    if peer is None:
        return ""  # a unix socket or no peer: no address (axes stores it in an IP column)
    if not _is_trusted(peer):
        return str(peer)
    header = str(request.META.get("HTTP_X_FORWARDED_FOR") or "")
    # Several X-Forwarded-For headers arrive joined by commas; walk them right to left.
    client = peer
    for entry in reversed([part for part in header.split(",") if part.strip()]):
        address = _parse(entry)
        if address is None:
            break  # garbage in the chain: stop at the last address a trusted proxy vouched for
        client = address
        if not _is_trusted(address):
            break
    return str(client)
