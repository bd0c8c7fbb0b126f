"""Concurrent searches of one FTS5 index: reads on their own connections against one connection.

Run with ``uv run --frozen python scripts/bench/fts5_readers.py --index INDEX.sqlite
[--clients 16] [--seconds 20] [--readers 4]``, for instance over the 100,000-passage
index ``serve_scale.py`` builds (``WORKDIR/scale-chroma-100000/chunks.sqlite``).

``--clients`` tasks search the index at once, each one question after another (SciFact's
questions as the OR of their words, as klea-serve reads a question), for ``--seconds``
with one reader connection (every read through the writer's connection, as before the
reader pool) and with ``--readers``, alternately, in one process. Printed: searches per
second, p50 / p95 latency, wall and CPU time, and the ratio of the two.
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's: it moves
# behind the standard library on the import path (``bm25_scale`` is imported from it).
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import asyncio
import re
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from bm25_scale import queries
from sci_etl_core.search import parse_query
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store


@dataclass(frozen=True)
class Run:
    readers: int
    searches: int
    wall: float
    cpu: float
    latencies: list[float]

    def row(self) -> str:
        ordered = sorted(self.latencies)
        p95 = ordered[int(0.95 * (len(ordered) - 1))]
        return (
            f"| {self.readers} | {self.searches / self.wall:.1f} | "
            f"{statistics.median(ordered) * 1000:.0f} | {p95 * 1000:.0f} | "
            f"{self.wall:.1f} | {self.cpu:.1f} |"
        )


def as_or_query(question: str) -> str:
    words = re.findall(r"[A-Za-z]{3,}", question)
    return " OR ".join(f'"{w.lower()}"' for w in words[:12]) or '"cell"'


async def measure(index: Path, readers: int, clients: int, seconds: float) -> Run:
    questions = [parse_query(as_or_query(q)) for q in queries(300)]
    store = AsyncSqliteFts5Store(index, readers=readers)
    await store.count()  # opened before the clock starts
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def client(n: int) -> None:
        i = n
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            await store.search(questions[i % len(questions)], limit=50)
            latencies.append(time.perf_counter() - started)
            i += clients

    wall0, cpu0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(client(n) for n in range(clients)))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    await store.aclose()
    return Run(readers, len(latencies), wall, cpu, latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--readers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    runs: dict[int, list[Run]] = {1: [], args.readers: []}
    for _ in range(args.rounds):  # alternate, so neither setting gets the warmer cache
        for readers in (1, args.readers):
            runs[readers].append(
                asyncio.run(measure(args.index, readers, args.clients, args.seconds))
            )
    print(
        f"{args.clients} clients, {args.seconds:g} s per run, {args.rounds} runs each, "
        f"{os.cpu_count()} cores; index {args.index.name}"
    )
    print("| readers | searches/s | p50 ms | p95 ms | wall s | CPU s |")
    print("|---|---|---|---|---|---|")
    for done in runs.values():
        for run in done:
            print(run.row())
    rate = {r: sum(x.searches for x in d) / sum(x.wall for x in d) for r, d in runs.items()}
    print(f"searches per second, {args.readers} readers / 1: {rate[args.readers] / rate[1]:.2f}x")


if __name__ == "__main__":
    main()
