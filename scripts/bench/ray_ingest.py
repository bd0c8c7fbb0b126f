"""Benchmark conversion on Ray against the local path, on generated text PDFs.

Runs, in one process and on copies of one corpus: the local path with one conversion
worker (``chunk_all`` with the default subprocess workers), then ``chunk_all`` on a
private local Ray instance with 1 and with 2 CPUs (so 1 and 2 Ray conversion workers).
Reports files per minute of each and the two ratios the Ray path is held to: 2 Ray
workers >= 1.6x one Ray worker, and one Ray worker within 15% of the local path. Ray's
own start (``ray.init``) is outside the timing, as a cluster is started once for many
runs; worker start-up (importing Docling) is inside it, on both paths.

    uv run --frozen python scripts/bench/ray_ingest.py --files 40

Figures need the cores to themselves: on a shared machine they say little.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "packages/klea-ingest/tests"))

from ingest_corpus import sample_paragraphs, write_text_pdf
from klea_utils.stores.ingestion import StoresBuilder

MODEL = "huggingface:all-MiniLM-L6-v2"


def _corpus(root: Path, count: int) -> Path:
    root.mkdir()
    for i in range(count):
        write_text_pdf(root / f"p{i:05d}.pdf", f"Paper {i}", sample_paragraphs(6, seed=i))
    return root


def _timed(source: Path, ray_address: str | None, count: int) -> float:
    builder = StoresBuilder(
        MODEL, logging.getLogger("bench"), max_tokens=256, ray_address=ray_address
    )
    start = time.perf_counter()
    headings = builder.chunk_all(source, worker_batch_size=10_000)
    elapsed = time.perf_counter() - start
    assert len(headings) == count, f"only {len(headings)}/{count} files chunked"
    return count / elapsed * 60


def _ray_rate(corpus: Path, work: Path, cpus: int, count: int) -> float:
    import ray

    source = work / f"ray{cpus}"
    shutil.copytree(corpus, source)
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    try:
        return _timed(source, "local", count)
    finally:
        ray.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=40, help="generated PDFs (40+)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="klea-ray-bench-") as tmp:
        work = Path(tmp)
        corpus = _corpus(work / "corpus", args.files)
        shutil.copytree(corpus, work / "local")
        local = _timed(work / "local", None, args.files)
        ray1 = _ray_rate(corpus, work, 1, args.files)
        ray2 = _ray_rate(corpus, work, 2, args.files)
    print(f"{args.files} text PDFs, files per minute (cores on this host: {os.cpu_count()})")
    print(f"  local, 1 worker : {local:8.1f}")
    print(f"  Ray, 1 worker   : {ray1:8.1f}")
    print(f"  Ray, 2 workers  : {ray2:8.1f}")
    print(f"Ray 2 workers / 1 worker: {ray2 / ray1:.2f}x (target >= 1.6x)")
    print(f"Ray 1 worker / local    : {ray1 / local:.2f}x (target >= 0.85x)")


if __name__ == "__main__":
    main()
