"""The client side of the klea-serve benches: start the server, time calls, load it.

``serve.py`` (the demo's stores) and ``serve_scale.py`` (100,000 passages) share these:
:func:`start_server` runs ``klea-serve --stores-config`` on a free loopback port and waits
until ``/api/health`` says the stores are loaded; :func:`timed` times one call;
:func:`load` runs concurrent clients for a fixed time; :func:`percentile` reads p95 off
the times.
"""

from __future__ import annotations

import concurrent.futures
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx

BIN = Path(sys.executable).parent
"""The folder of this interpreter's console scripts (``klea-serve``, ``klea-retrieve``)."""

Call = Callable[[httpx.Client, int], None]
"""One request: ``call(client, i)`` with ``i`` the call's number; it raises on failure
(:class:`httpx.HTTPError`, or :class:`RuntimeError` for an answer without results)."""


def start_server(
    stores: Path, *, wait_s: float
) -> tuple[subprocess.Popen[bytes], str, float, float]:
    """Start ``klea-serve`` on ``stores``; return it, its URL and two start-up times in s.

    The first is the time until ``/api/health`` answers (the socket opens before the
    stores load), the second until it says the stores are loaded (``status`` not
    ``starting``). The bench exits when the server stops or is not loaded within
    ``wait_s`` seconds.
    """
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    server = subprocess.Popen(
        [str(BIN / "klea-serve"), "--stores-config", str(stores), "--port", str(port)],
        stderr=subprocess.DEVNULL,
    )
    answered: float | None = None
    while True:
        try:
            health = httpx.get(f"{url}/api/health", timeout=5)
            health.raise_for_status()
            if answered is None:
                answered = time.perf_counter() - started
            if health.json().get("status") != "starting":
                return server, url, answered, time.perf_counter() - started
        except httpx.HTTPError:
            pass
        if server.poll() is not None or time.perf_counter() - started > wait_s:
            server.kill()
            raise SystemExit("klea-serve did not start")
        time.sleep(0.1 if answered is not None else 0.25)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def timed(call: Call, client: httpx.Client, i: int) -> float:
    """Seconds that ``call(client, i)`` took."""
    started = time.perf_counter()
    call(client, i)
    return time.perf_counter() - started


def load(url: str, calls: Sequence[Call], clients: int, seconds: float) -> tuple[list[float], int]:
    """``clients`` concurrent clients cycling through ``calls`` for ``seconds``.

    Returns the times of the calls that succeeded and the number that failed. Client ``n``
    numbers its calls ``n, n + 1, ...`` and makes call ``i`` with ``calls[i % len(calls)]``,
    so the clients start at different questions or operations.
    """
    deadline = time.perf_counter() + seconds

    def worker(n: int) -> tuple[list[float], int]:
        times, errors = [], 0
        with httpx.Client(base_url=url, timeout=60) as client:
            i = n
            while time.perf_counter() < deadline:
                try:
                    times.append(timed(calls[i % len(calls)], client, i))
                except (httpx.HTTPError, RuntimeError):
                    errors += 1
                i += 1
        return times, errors

    with concurrent.futures.ThreadPoolExecutor(max_workers=clients) as pool:
        results = list(pool.map(worker, range(clients)))
    return [t for times, _ in results for t in times], sum(e for _, e in results)
