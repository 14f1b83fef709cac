"""The client address (staff.client_address): forwarded headers only from configured proxies."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from staff.client_address import client_ip


def ip(remote: str, forwarded: str | None = None) -> str:
    meta = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded
    return client_ip(RequestFactory().get("/", **meta))  # type: ignore[arg-type]


def test_without_trusted_proxies_the_header_is_ignored_even_from_the_loopback(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PAYOPS_TRUSTED_PROXIES = []
    assert ip("127.0.0.1", "198.51.100.7") == "127.0.0.1"
    assert ip("192.0.2.1", "198.51.100.7, 10.0.0.1") == "192.0.2.1"


@pytest.mark.parametrize(
    ("remote", "forwarded", "expected"),
    [
        # A trusted proxy's header names the client.
        ("10.0.0.5", "198.51.100.7", "198.51.100.7"),
        # The client's own forged entries are to the left: the rightmost untrusted one wins.
        ("10.0.0.5", "1.2.3.4, 198.51.100.7", "198.51.100.7"),
        # Two trusted hops (a CIDR and an exact address).
        ("10.0.0.5", "6.6.6.6, 198.51.100.7, 10.0.0.9", "198.51.100.7"),
        # A peer outside the trusted set: its header is not believed.
        ("192.0.2.1", "198.51.100.7", "192.0.2.1"),
        # No header from a trusted proxy: the proxy itself.
        ("10.0.0.5", None, "10.0.0.5"),
        # Garbage in the chain stops the walk at the last address a trusted proxy vouched for.
        ("10.0.0.5", "198.51.100.7, not-an-ip", "10.0.0.5"),
        # Ports and IPv6.
        ("10.0.0.5", "198.51.100.7:5555", "198.51.100.7"),
        ("10.0.0.5", "[2001:db8::1]:443", "2001:db8::1"),
        ("2001:db8:ffff::2", "203.0.113.1", "203.0.113.1"),
    ],
)
def test_a_configured_proxys_header_is_honoured_rightmost_untrusted(
    settings,  # type: ignore[no-untyped-def]
    remote: str,
    forwarded: str | None,
    expected: str,
) -> None:
    settings.PAYOPS_TRUSTED_PROXIES = ["10.0.0.0/24", "2001:db8:ffff::/48"]
    assert ip(remote, forwarded) == expected


def test_every_address_trusted_gives_the_leftmost(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PAYOPS_TRUSTED_PROXIES = ["10.0.0.0/8"]
    assert ip("10.0.0.5", "10.1.1.1, 10.2.2.2") == "10.1.1.1"


def test_a_peer_without_an_ip_address_has_none(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PAYOPS_TRUSTED_PROXIES = ["10.0.0.0/8"]
    assert ip("", "198.51.100.7") == ""
    assert ip("unix:/run/payops.sock", "198.51.100.7") == ""
