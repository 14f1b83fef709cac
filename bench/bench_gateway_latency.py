"""Median latency of one gateway call with a new HTTP client per call vs kept-alive connections.

Run: python bench/bench_gateway_latency.py. Uses DATABASE_URL / REDIS_URL when set, otherwise a
temporary SQLite file. Starts the emulator (uvicorn, its own process) on a free port, creates a
sandbox environment whose limits are raised out of the way (the limiter would otherwise pace the
calls and hide the connection cost), then makes BENCH_CALLS sequential GET quotation calls through
the gateway, first with GATEWAY_CONNECTION_REUSE off (a client, TCP connection and TLS setup per
call: the old behaviour), then on, through the sync bridge and from one async loop. Last lines:
gateway_call_ms_p50_before=<ms>, gateway_call_ms_p50_after=<ms>, gateway_call_ms_p50=<before/after>.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import tempfile
import time

import httpx
from _support import django_setup, environment, free_port, migrate, start_emulator, wait_healthy

CALLS = int(os.environ.get("BENCH_CALLS", "300"))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = environment(tmp)
        os.environ.update(env)
        migrate(env)
        port = free_port()
        url = f"https://127.0.0.1:{port}"
        key_file, cert_file = self_signed(tmp)
        # The gateway verifies TLS as in production; it trusts this run's certificate only.
        os.environ["SSL_CERT_FILE"] = cert_file
        tls = ["--ssl-keyfile", key_file, "--ssl-certfile", cert_file]
        emulator = start_emulator(port, env, *tls)
        try:
            wait_healthy(url, emulator, verify=cert_file)
            run(url, env, cert_file)
        finally:
            emulator.terminate()
            started = time.monotonic()
            emulator.wait(timeout=60)
            print(f"# emulator stopped in {time.monotonic() - started:.1f}s")


def self_signed(tmp: str) -> tuple[str, str]:
    """A throw-away key and certificate for 127.0.0.1, so the bench pays a real TLS handshake."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_file, cert_file = os.path.join(tmp, "key.pem"), os.path.join(tmp, "cert.pem")
    with open(key_file, "wb") as handle:
        handle.write(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    with open(cert_file, "wb") as handle:
        handle.write(cert.public_bytes(serialization.Encoding.PEM))
    return key_file, cert_file


def run(url: str, env: dict[str, str], cert_file: str) -> None:
    django_setup()
    from django.conf import settings

    from gateway import connections
    from gateway.client import call_sync, upstream
    from gateway.models import Environment

    credentials = httpx.post(
        f"{url}/_control/clients",
        json={"name": "bench-latency", "rate_per_second": 10_000, "max_concurrent": 50},
        headers={"X-Emulator-Token": env["EMULATOR_CONTROL_TOKEN"]},
        timeout=10,
        verify=cert_file,
    ).json()
    environment_ = Environment(
        name=f"bench-latency-{secrets.token_hex(4)}",
        kind="sandbox",
        base_url=url,
        rate_per_second=10_000,
        max_concurrent=50,
        weekly_budget=1_000_000,
    )
    environment_.set_credentials(**credentials)
    environment_.save()
    client = upstream(environment_)
    try:
        quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)

        def sync_calls() -> list[float]:
            timings = []
            for _ in range(CALLS):
                started = time.perf_counter()
                call_sync(client.quotations.get, quote.quote_id)
                timings.append((time.perf_counter() - started) * 1000)
            return timings

        async def async_calls() -> list[float]:
            timings = []
            for _ in range(CALLS):
                started = time.perf_counter()
                await client.quotations.get(quote.quote_id)
                timings.append((time.perf_counter() - started) * 1000)
            return timings

        async def raw_sends() -> list[float]:
            """The HTTP exchange alone (no token, limiter or call log): what reuse changes."""
            timings = []
            for _ in range(CALLS):
                started = time.perf_counter()
                await connections.send(
                    "bench", "GET", f"{url}/healthz", content=None, params=None, headers={}
                )
                timings.append((time.perf_counter() - started) * 1000)
            return timings

        results: dict[str, float] = {}
        for reuse in (False, True):
            settings.GATEWAY_CONNECTION_REUSE = reuse
            sync_calls()[:10]  # warm-up: token, limiter rows, first connection
            results[f"sync_{reuse}"] = statistics.median(sync_calls())
            results[f"async_{reuse}"] = statistics.median(asyncio.run(async_calls()))
            results[f"raw_{reuse}"] = statistics.median(asyncio.run(raw_sends()))
        before, after = results["sync_False"], results["sync_True"]
        print(f"# {CALLS} sequential GET quotation calls per figure, emulator at {url}")
        print(
            f"# async caller (one loop): p50 {results['async_False']:.2f} ms new client, "
            f"{results['async_True']:.2f} ms kept alive"
        )
        print(
            f"# HTTP exchange alone (GET /healthz over TLS): p50 {results['raw_False']:.2f} ms "
            f"new client, {results['raw_True']:.2f} ms kept alive"
        )
        print(f"gateway_call_ms_p50_before={before:.2f}")
        print(f"gateway_call_ms_p50_after={after:.2f}")
        print(f"gateway_call_ms_p50={before / after:.2f}")
    finally:
        started = time.monotonic()
        connections.close()
        print(f"# kept-alive connections closed in {time.monotonic() - started:.2f}s")
        environment_.delete()


if __name__ == "__main__":
    main()
