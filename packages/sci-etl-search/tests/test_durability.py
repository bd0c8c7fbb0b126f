"""The FTS5 store under SIGKILL and with a second process reading while one writes."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

BATCH = 25
TRIALS = 20

_WRITER = """
import asyncio, sys
from sci_etl_core.search.store_base import SearchDocument
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

async def main(path, trial):
    store = AsyncSqliteFts5Store(path, facet_keys=["batch"])
    await store.count()
    print("ready", flush=True)
    batch = 0
    while True:
        docs = [
            SearchDocument(
                f"t{trial}-b{batch}-{i}",
                title=f"batch{batch} trial{trial} document {i}",
                abstract="words " * (i % 7 + 1) + "common",
                metadata={"batch": f"{trial}-{batch}"},
            )
            for i in range(int(sys.argv[3]))
        ]
        await store.index(docs)
        print(batch, flush=True)
        batch += 1

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def start_writer(path: Path, trial: int) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path), str(trial), str(BATCH)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.strip() == "ready", process.stderr.read() if process.stderr else line
    return process


def batch_sizes(record_ids: frozenset[str]) -> Counter[str]:
    return Counter(rid.rsplit("-", 1)[0] for rid in record_ids)


@pytest.mark.slow
async def test_sigkill_leaves_whole_batches_only(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    rng = random.Random(20240501)
    for trial in range(TRIALS):
        writer = start_writer(path, trial)
        time.sleep(rng.uniform(0.0, 0.4))
        writer.send_signal(signal.SIGKILL)
        out, _ = writer.communicate(timeout=30)
        acknowledged = [int(line) for line in out.split() if line.isdigit()]
        store = AsyncSqliteFts5Store(path, facet_keys=["batch"])
        try:
            assert await store.integrity_check()
            sizes = batch_sizes(await store.filter_ids())
            assert all(size == BATCH for size in sizes.values()), sizes
            present = sorted(
                int(key.split("-b")[1]) for key in sizes if key.startswith(f"t{trial}-")
            )
            # Batches commit in order, and every acknowledged batch is durable.
            assert present == list(range(len(present)))
            assert len(present) >= len(acknowledged)
        finally:
            await store.aclose()


@pytest.mark.slow
async def test_reader_sees_only_committed_batches(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    reader = AsyncSqliteFts5Store(path, facet_keys=["batch"])
    await reader.count()
    writer = start_writer(path, 0)
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            sizes = batch_sizes(await reader.filter_ids())
            assert all(size == BATCH for size in sizes.values()), sizes
            seen.add(len(sizes))
            facet = await reader.facet_counts(["batch"])
            assert all(count == BATCH for _, count in facet["batch"])
            await asyncio.sleep(0.01)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.communicate(timeout=30)
        await reader.aclose()
    assert len(seen) > 3, "the reader should have watched several batches arrive"
    assert os.path.exists(path)
