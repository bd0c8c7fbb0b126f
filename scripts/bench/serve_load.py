"""klea-serve under sustained load: 50 clients for five minutes on 100,000 passages.

Run with ``uv run --frozen python scripts/bench/serve_load.py [--size 100000]
[--backend chroma|pgvector] [--workdir /tmp/serve-papers] [--clients 50] [--seconds 300]
[--sample-s 10] [--flat-s 240]``.

The library is ``serve_scale.py``'s (built once into ``WORKDIR/scale-<backend>-<size>``
and reused) and served the same way, with klea-serve's default limits (64 requests in
progress). After one warm-up call of each operation, ``--clients`` clients cycle through
``retrieve``, ``search`` (lexical; hybrid when the service offers it), ``facets`` (all
papers, and over a query's matches) and ``get_document`` for ``--seconds`` s, as
``serve_scale.py``'s concurrent phase does. Reported:

- requests, throughput, and errors by kind: an HTTP status (a 503 from the concurrency
  limit counts), a transport error (``ReadTimeout``...) or ``empty`` (an answer without
  results), with the first answer's text of each kind;
- p50 / p95 / p99 per operation and over all of them (answered requests);
- the server's resident memory every ``--sample-s`` s (psutil on its pid): first, last,
  max, and the least-squares slope in MiB/min over the last ``--flat-s`` s, after the
  warm-up: "memory flat" means that slope is near zero;
- wall time, the server's CPU seconds during the load and the load average.

The server's stderr goes to ``WORKDIR/serve-load-<backend>-<size>.log``, to read an
error's whole message by the request id its answer carries. Prints a Markdown table for
docs/benchmarks.md.
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's: it moves
# behind the standard library on the import path (``serve_client`` is imported from it).
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import collections
import concurrent.futures
import contextlib
import statistics
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import httpx
import psutil
import serve_client
from bm25_scale import queries
from serve_client import Call, percentile, start_server
from serve_scale import operations, prepare, some_files

MiB = 2**20


@dataclass(frozen=True)
class Outcome:
    """One request of the load: its operation, how it ended and how long it took."""

    operation: str
    kind: str
    """``"ok"``, an HTTP status (``"503"``), a transport error's name or ``"empty"``."""
    seconds: float
    text: str = ""
    """The failure's message or answer (first 300 characters)."""


@dataclass(frozen=True)
class Sample:
    """The server process at one moment of the load."""

    at: float
    """Seconds since the load started."""
    rss: float
    """Resident memory, MiB."""
    cpu: float
    """User + system CPU seconds since the process started."""
    load: float
    """The machine's one-minute load average."""


def run_one(name: str, call: Call, client: httpx.Client, i: int) -> Outcome:
    """Make call ``i`` and say how it ended (it never raises what a call may raise)."""
    started = time.perf_counter()
    try:
        call(client, i)
    except httpx.HTTPStatusError as exc:
        kind, text = str(exc.response.status_code), exc.response.text
    except httpx.HTTPError as exc:
        kind, text = type(exc).__name__, str(exc)
    except RuntimeError as exc:
        kind, text = "empty", str(exc)
    else:
        kind, text = "ok", ""
    return Outcome(name, kind, time.perf_counter() - started, text[:300])


def load(url: str, ops: dict[str, Call], clients: int, seconds: float) -> list[Outcome]:
    """``clients`` concurrent clients cycling through ``ops`` for ``seconds``.

    Client ``n`` numbers its calls ``n, n + 1, ...`` and makes call ``i`` with the
    ``i % len(ops)``-th operation, as ``serve_client.load`` does.
    """
    names = list(ops)
    deadline = time.perf_counter() + seconds

    def worker(n: int) -> list[Outcome]:
        outcomes = []
        with httpx.Client(base_url=url, timeout=60) as client:
            i = n
            while time.perf_counter() < deadline:
                name = names[i % len(names)]
                outcomes.append(run_one(name, ops[name], client, i))
                i += 1
        return outcomes

    with concurrent.futures.ThreadPoolExecutor(max_workers=clients) as pool:
        return [o for outcomes in pool.map(worker, range(clients)) for o in outcomes]


@contextlib.contextmanager
def sampling(process: psutil.Process, every: float) -> Iterator[list[Sample]]:
    """Sample ``process`` at once and every ``every`` s until the block ends, and once then."""
    samples: list[Sample] = []
    started = time.perf_counter()
    stop = threading.Event()

    def take() -> None:
        cpu = process.cpu_times()
        rss = process.memory_info().rss / MiB
        at, load = time.perf_counter() - started, psutil.getloadavg()[0]
        samples.append(Sample(at, rss, cpu.user + cpu.system, load))

    def loop() -> None:
        while not stop.wait(every - (time.perf_counter() - started) % every):
            take()

    take()
    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield samples
    finally:
        stop.set()
        thread.join()
        take()


def slope(samples: list[Sample]) -> float:
    """Least-squares slope of resident memory over time, MiB per minute."""
    if len(samples) < 2:
        return float("nan")
    fit = statistics.linear_regression([s.at / 60 for s in samples], [s.rss for s in samples])
    return fit.slope


@contextlib.contextmanager
def server_log(path: Path) -> Iterator[None]:
    """Send the stderr of the server ``start_server`` starts to ``path``.

    ``serve_client.start_server`` discards it (``stderr=subprocess.DEVNULL``); this points
    that name, in ``serve_client`` alone, at the log file while the server starts.
    """
    with path.open("ab") as log:
        logged = SimpleNamespace(Popen=subprocess.Popen, DEVNULL=log)
        with mock.patch.object(serve_client, "subprocess", logged):
            yield


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def tails(times: list[float]) -> str:
    """``p50 / p95 / p99 ms`` of ``times``."""
    if not times:
        return "-"
    qs = (statistics.median(times), percentile(times, 0.95), percentile(times, 0.99))
    return " / ".join(ms(q) for q in qs) + " ms"


def table(
    outcomes: list[Outcome], samples: list[Sample], seconds: float, flat_s: float
) -> list[tuple[str, str, str]]:
    """The rows of the Markdown table: requests, errors, latency, memory, CPU."""
    rows: list[tuple[str, str, str]] = []
    errors = collections.Counter(o.kind for o in outcomes if o.kind != "ok")
    by_kind = ", ".join(f"{n} x {k}" for k, n in errors.most_common()) or "none"
    rows.append(
        (
            "requests",
            f"{len(outcomes)} ({len(outcomes) / seconds:.1f}/s)",
            f"errors: **{sum(errors.values())}** ({by_kind})",
        )
    )
    for name in dict.fromkeys(o.operation for o in outcomes):
        mine = [o for o in outcomes if o.operation == name]
        answered = [o.seconds for o in mine if o.kind == "ok"]
        failed = len(mine) - len(answered)
        rows.append((f"`{name}`", tails(answered), f"{len(mine)} requests, {failed} errors"))
    answered = [o.seconds for o in outcomes if o.kind == "ok"]
    rows.append(("all operations", tails(answered), f"{len(answered)} answered"))
    rss = [s.rss for s in samples]
    rows.append(
        (
            "server RSS, first / last / max",
            f"{rss[0]:.0f} / {rss[-1]:.0f} / {max(rss):.0f} MiB",
            f"{len(samples)} samples",
        )
    )
    window = [s for s in samples if s.at >= samples[-1].at - flat_s]
    rows.append(
        (
            f"RSS slope, last {flat_s:g} s",
            f"{slope(window):+.2f} MiB/min",
            f"whole run {slope(samples):+.2f} MiB/min",
        )
    )
    cpu = samples[-1].cpu - samples[0].cpu
    per = f"{cpu / len(outcomes) * 1000:.0f} ms per request" if outcomes else ""
    rows.append(("server CPU during the load", f"{cpu:.0f} s", per))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--backend", choices=("chroma", "pgvector"), default="chroma")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/serve-papers"))
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--sample-s", type=float, default=10.0)
    parser.add_argument("--flat-s", type=float, default=240.0)
    args = parser.parse_args()
    stores = prepare(args.workdir, args.size, args.backend)
    log_path = args.workdir / f"serve-load-{args.backend}-{args.size}.log"
    with server_log(log_path):
        server, url, startup, ready = start_server(stores, wait_s=900)
    print(f"start-up {startup:.1f} s, loaded at {ready:.1f} s; log {log_path}", flush=True)
    process = psutil.Process(server.pid)
    try:
        questions = queries(200)
        with httpx.Client(base_url=url, timeout=60) as client:
            hybrid = bool(client.get("/api/health").json().get("vectors"))
            files = sorted(set(some_files(client, questions)))
            ops = operations(questions, files, hybrid)
            for name, op in ops.items():  # warm-up: first queries load indexes
                warm = run_one(name, op, client, 0)
                print(f"warm-up {name}: {warm.kind} {ms(warm.seconds)} ms", flush=True)
        cpu_started, wall_started = time.process_time(), time.perf_counter()
        with sampling(process, args.sample_s) as samples:
            outcomes = load(url, ops, args.clients, args.seconds)
        wall = time.perf_counter() - wall_started
        bench_cpu = time.process_time() - cpu_started
    finally:
        server.terminate()
        server.wait(timeout=30)
    print("RSS MiB every sample: " + " ".join(f"{s.rss:.0f}" for s in samples))
    print("load average every sample: " + " ".join(f"{s.load:.1f}" for s in samples))
    loads = [s.load for s in samples]
    failures = {o.kind: o for o in outcomes if o.kind != "ok"}
    for kind, first in failures.items():
        print(f"first {kind} ({first.operation}): {first.text}")
    print(
        f"\n{args.size} passages, {args.backend} + fts5, {args.clients} clients, "
        f"{args.seconds:g} s (wall {wall:.0f} s, load average {min(loads):.1f}-"
        f"{max(loads):.1f}, the bench's own clients {bench_cpu:.0f} CPU-s):\n"
    )
    print("| measure | value (p50 / p95 / p99) | note |\n|---|---|---|")
    for row in table(outcomes, samples, args.seconds, args.flat_s):
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
