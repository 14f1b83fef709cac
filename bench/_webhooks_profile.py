"""Where a delivery's CPU goes: the receiver against the bare view, in process (cProfile).

Run: python bench/_webhooks_profile.py [--profile]. Same data as bench_webhooks.py (temporary
SQLite, or DATABASE_URL / REDIS_URL), the ASGI application called in process through httpx (no
server, one request at a time): prints CPU and wall milliseconds per request of each, and with
--profile the receiver's top functions by cumulative time.
"""

from __future__ import annotations

import asyncio
import cProfile
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _support import ROOT, environment, migrate
from bench_webhooks import setup_data, signed_events

COUNT = int(os.environ.get("BENCH_PROFILE_EVENTS", "500"))


async def send(app: object, url: str, items: list[tuple[bytes, dict[str, str]]]) -> None:
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        for body, headers in items:
            response = await client.post(url, content=body, headers=headers)
            assert response.status_code == 200, response.text


def timed(app: object, url: str, prefix: str) -> tuple[float, float]:
    items = signed_events(COUNT, prefix)
    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(send(app, url, items))
    return (
        (time.process_time() - cpu) * 1000 / COUNT,
        (time.perf_counter() - wall) * 1000 / COUNT,
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = environment(tmp)
        env["DJANGO_SETTINGS_MODULE"] = "_webhooks_settings"
        env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{ROOT / 'bench'}"
        os.environ.update(env)
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        migrate(env)
        receiver_id, _cookie = setup_data()
        from django.core.asgi import get_asgi_application

        app = get_asgi_application()
        receiver = f"/webhooks/in/{receiver_id}/"
        timed(app, "/bench/bare/", "warm")
        timed(app, receiver, "warm")
        for round_ in range(2):
            bare = timed(app, "/bench/bare/", f"bare{round_}")
            received = timed(app, receiver, f"ack{round_}")
            print(
                f"bare: cpu {bare[0]:.2f} ms wall {bare[1]:.2f} ms; "
                f"receiver: cpu {received[0]:.2f} ms wall {received[1]:.2f} ms; "
                f"cpu ratio {bare[0] / received[0]:.2f}"
            )
        from webhooks.services.receiving import delivery_receive

        def direct(prefix: str) -> float:
            items = signed_events(COUNT, prefix)
            cpu = time.thread_time()
            for body, headers in items:
                answer = delivery_receive(
                    receiver_id=receiver_id,
                    headers=headers,
                    body=body,
                    body_size=len(body),
                    started=time.perf_counter(),
                )
                assert answer.status == 200, answer
            return (time.thread_time() - cpu) * 1000 / COUNT

        direct("dwarm")
        print(f"delivery_receive alone, one thread: cpu {direct('direct'):.2f} ms")
        if "--direct" in sys.argv:
            profile = cProfile.Profile()
            profile.enable()
            direct("dprofiled")
            profile.disable()
            pstats.Stats(profile).sort_stats("tottime").print_stats(40)
        if "--profile" in sys.argv:
            profile = cProfile.Profile()
            profile.enable()
            timed(app, receiver, "profiled")
            profile.disable()
            pstats.Stats(profile).sort_stats("cumulative").print_stats(45)


if __name__ == "__main__":
    main()
