"""Where an alert webhook may point: public addresses only (no SSRF into our own network).

An admin gives the URL, but the worker makes the request from inside our network: a URL on
loopback, a private, link-local (cloud metadata: 169.254.169.254), shared, multicast or reserved
address would let an alert rule reach what only we can reach. Refused unless
PAYOPS_ALERTS_ALLOW_PRIVATE_WEBHOOKS (local receivers in development and tests):

- when a rule is saved or proposed (`webhook_host_refusal` on the URL as written: an address, or
  a name such as localhost), a 400 on `webhook_url`;
- at delivery, after DNS resolution (`webhook_resolved_refusal`): every address the name resolves
  to must be public, so a name that resolved elsewhere when the rule was saved (DNS rebinding)
  is refused too.

Neither message nor log ever holds the URL (a secret): only the rule's hint.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

LOCAL_NAMES = ("localhost", "localhost.localdomain")


def private_allowed() -> bool:
    return bool(getattr(settings, "PAYOPS_ALERTS_ALLOW_PRIVATE_WEBHOOKS", False))


def address_is_public(address: str) -> bool:
    """Whether `address` is a globally routable unicast address (IPv4-mapped IPv6 unwrapped)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def _literal(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


def webhook_host_refusal(url: str) -> str:
    """Why the URL as written may not be a webhook ("" when it may): its host is a non-public
    address or a local name."""
    if private_allowed():
        return ""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    literal = _literal(host)
    if literal is not None:
        return "" if address_is_public(literal) else "private"
    if host in LOCAL_NAMES or host.endswith(".localhost"):
        return "private"
    return ""


def webhook_resolved_refusal(url: str) -> str:
    """At delivery: "" when every address the host resolves to is public (or private ones are
    allowed); otherwise why not ("private" or "unresolved")."""
    if private_allowed():
        return ""
    written = webhook_host_refusal(url)
    if written:
        return written
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(parts.hostname or "", port, type=socket.SOCK_STREAM)
    except OSError:
        return "unresolved"
    addresses = {str(info[4][0]) for info in infos}
    if not addresses:
        return "unresolved"
    return "" if all(address_is_public(address) for address in addresses) else "private"
