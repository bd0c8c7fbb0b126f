"""Resident ``klea-serve`` retrieval against one cold ``klea-retrieve`` call, same run.

Run after ``scripts/demo`` (the demo stores in ``.demo``)::

    uv run --frozen python scripts/bench/serve.py [--workdir .demo] [--requests 60]
        [--clients 20] [--seconds 30]

1. One cold ``klea-retrieve`` call (a new process: imports, model and stores load, one
   query), wall clock.
2. ``klea-serve`` started once on a free loopback port (start-up reported), then
   ``--requests`` sequential ``POST /api/retrieve`` calls over the demo questions:
   p50 / p95 latency and the ratio against the cold call.
3. ``--clients`` concurrent clients for ``--seconds`` seconds against ``/api/retrieve``:
   requests, errors, p50 / p95.

Targets (issue "klea-serve"): p50 < 150 ms, p95 < 400 ms, >= 50x faster than the cold
call; under load no error and p95 < 2 s. Prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's: it moves
# behind the standard library on the import path (``serve_client`` is imported from it).
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import statistics
import subprocess
import time
from pathlib import Path

import httpx
from serve_client import BIN, load, percentile, start_server, timed

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = (
    "How do chaperones help proteins fold under heat stress?",
    "What is the likely range of equilibrium climate sensitivity?",
    "Which features predict off-target cleavage by Cas9?",
    "How does BM25 normalize document length?",
    "Do marine heatwaves cause coral bleaching?",
)


def cold_cli(stores: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [str(BIN / "klea-retrieve"), "--stores-config", str(stores), QUESTIONS[0]],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def retrieve(client: httpx.Client, i: int) -> None:
    """``POST /api/retrieve`` with the ``i``-th question (cycling); no passages is an error."""
    question = QUESTIONS[i % len(QUESTIONS)]
    response = client.post("/api/retrieve", json={"query": question, "k": 5})
    response.raise_for_status()
    if not response.json()["passages"]:
        raise RuntimeError(f"no passages for {question!r}")


def sequential(url: str, requests: int) -> list[float]:
    with httpx.Client(base_url=url, timeout=60) as client:
        for i in range(len(QUESTIONS)):  # warm-up: first use of each code path
            retrieve(client, i)
        return [timed(retrieve, client, i) for i in range(requests)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=ROOT / ".demo")
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    stores = args.workdir.resolve() / "stores.json"
    if not stores.is_file():
        raise SystemExit(f"{stores} not found: run scripts/demo first")

    cold = cold_cli(stores)
    print(f"cold klea-retrieve, one query: {cold:.2f} s", flush=True)
    server, url, answered, startup = start_server(stores, wait_s=600)
    try:
        print(f"klea-serve start-up: health answers {answered:.1f} s", flush=True)
        print(f"klea-serve start-up (stores and model loaded): {startup:.1f} s", flush=True)
        times = sequential(url, args.requests)
        p50, p95 = statistics.median(times), percentile(times, 0.95)
        print(f"resident retrieve x{len(times)}: p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms")
        loaded, errors = load(url, [retrieve], args.clients, args.seconds)
        lp50, lp95 = statistics.median(loaded), percentile(loaded, 0.95)
        print(
            f"{args.clients} clients x {args.seconds:g} s: {len(loaded)} requests, "
            f"{errors} errors, p50 {lp50 * 1000:.0f} ms, p95 {lp95 * 1000:.0f} ms"
        )
    finally:
        server.terminate()
        server.wait(timeout=30)

    rows = [
        ("cold `klea-retrieve`, one query (wall clock)", f"{cold:.2f} s", ""),
        ("`klea-serve` start-up, once", f"{startup:.1f} s", ""),
        ("resident `retrieve` p50", f"{p50 * 1000:.0f} ms", f"{cold / p50:.0f}x faster"),
        ("resident `retrieve` p95", f"{p95 * 1000:.0f} ms", f"{cold / p95:.0f}x faster"),
        (
            f"{args.clients} clients, {args.seconds:g} s: p50 / p95",
            f"{lp50 * 1000:.0f} / {lp95 * 1000:.0f} ms",
            f"{len(loaded)} requests, {errors} errors",
        ),
    ]
    print("\n| measure | value | note |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    targets = p50 < 0.150 and p95 < 0.400 and cold / p50 >= 50 and not errors and lp95 < 2.0
    print(f"\ntargets met: {targets}")


if __name__ == "__main__":
    main()
