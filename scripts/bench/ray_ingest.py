"""Benchmark conversion on Ray against the local path, on generated text PDFs.

Runs, in one process and on copies of one corpus: the local path with one conversion
worker (``chunk_all`` with the default subprocess workers), then ``chunk_all`` on a
private local Ray instance with 1 and with 2 CPUs (so 1 and 2 Ray conversion workers).
Reports files per minute of each and the two ratios the Ray path is held to: 2 Ray
workers >= 1.6x one Ray worker, and one Ray worker within 15% of the local path. Ray's
own start (``ray.init``) is outside the timing, as a cluster is started once for many
runs; worker start-up (importing Docling) is inside it, on both paths.

Where the time goes: the CPU-seconds of every process of each run, sampled while it
runs, split into the driver (this process), Ray's own daemons (GCS, raylet, log
monitor, agents), the conversion workers, and other children; plus one worker's
start-up CPU measured alone. From those it prints each part's CPU per file and the best
wall clock the 2-worker run's work allows on this host's cores (its CPU-seconds spread
over every core, and never less than one worker's start-up plus half the files), so a
ratio short of 1.6x can be read as the dispatch's fault or the work's shape.

    uv run --frozen python scripts/bench/ray_ingest.py --files 60
    uv run --frozen python scripts/bench/ray_ingest.py --files 40 --paragraphs 120

``--paragraphs`` sets the paragraphs per PDF (6: the one-page PDFs of
``scripts/bench/ingest.py``; 120: about ten pages). Figures need the cores to
themselves: on a shared machine they say little; the load average is printed.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "packages/klea-ingest/tests"))

from ingest_corpus import sample_paragraphs, write_text_pdf
from klea_utils.stores.ingestion import StoresBuilder

MODEL = "huggingface:all-MiniLM-L6-v2"
_DAEMONS = ("gcs_server", "raylet", "log_monitor", "dashboard", "runtime_env", "monitor.py")

_STARTUP = """
import logging, resource, sys, tempfile
from pathlib import Path
from klea_utils.stores._ingest.convert.file_processing import FileProcessor
FileProcessor(source_path=Path(tempfile.mkdtemp()), max_tokens=256, merge_peers=True,
              tokenizer_model=sys.argv[1], do_ocr=False, device="cpu", artifacts_path=None,
              logger=logging.getLogger("bench")).warm_up([".pdf"])
usage = resource.getrusage(resource.RUSAGE_SELF)
print(usage.ru_utime + usage.ru_stime)
"""


def _kind(proc: psutil.Process) -> str:
    command = " ".join(proc.cmdline())
    if "RayConversionWorker" in command or "spawn_main" in command:
        return "workers"
    if any(name in command for name in _DAEMONS):
        return "ray daemons"
    return "other"


class _CpuSampler(threading.Thread):
    """CPU-seconds of this process and its descendants, by kind, while a run goes on."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.start_cpu = self._sample()
        self.last = dict(self.start_cpu)

    @staticmethod
    def _sample() -> dict[int, tuple[str, float]]:
        me = psutil.Process()
        seen: dict[int, tuple[str, float]] = {}
        for proc in me.children(recursive=True):
            try:
                times = proc.cpu_times()
                seen[proc.pid] = (_kind(proc), times.user + times.system)
            except psutil.Error:
                continue
        times = me.cpu_times()
        seen[me.pid] = ("driver", times.user + times.system)
        return seen

    def _merge(self, sample: dict[int, tuple[str, float]]) -> None:
        for pid, (kind, cpu) in sample.items():
            known = self.last.get(pid)
            if known is not None and kind == "other":
                # An exited worker not yet reaped has an empty command line: keep its kind.
                kind = known[0]
            self.last[pid] = (kind, cpu)

    def run(self) -> None:
        while not self.stop.is_set():
            self._merge(self._sample())
            time.sleep(0.1)

    def finish(self) -> dict[str, float]:
        self.stop.set()
        self.join()
        self._merge(self._sample())
        shares: dict[str, float] = {}
        for pid, (kind, cpu) in self.last.items():
            before = self.start_cpu.get(pid, (kind, 0.0))[1]
            shares[kind] = shares.get(kind, 0.0) + cpu - before
        return shares


@dataclass
class Run:
    name: str
    workers: int
    wall: float
    load: float
    cpu: dict[str, float] = field(default_factory=dict)

    def rate(self, count: int) -> float:
        return count / self.wall * 60


def _corpus(root: Path, count: int, paragraphs: int) -> Path:
    root.mkdir()
    for i in range(count):
        write_text_pdf(root / f"p{i:05d}.pdf", f"Paper {i}", sample_paragraphs(paragraphs, seed=i))
    return root


def _timed(name: str, workers: int, source: Path, ray_address: str | None, count: int) -> Run:
    builder = StoresBuilder(
        MODEL, logging.getLogger("bench"), max_tokens=256, ray_address=ray_address
    )
    load = os.getloadavg()[0]
    sampler = _CpuSampler()
    sampler.start()
    start = time.perf_counter()
    headings = builder.chunk_all(source, worker_batch_size=10_000)
    elapsed = time.perf_counter() - start
    cpu = sampler.finish()
    assert len(headings) == count, f"only {len(headings)}/{count} files chunked"
    return Run(name, workers, elapsed, load, cpu)


def _ray_run(corpus: Path, work: Path, cpus: int, count: int) -> Run:
    import ray

    source = work / f"ray{cpus}"
    shutil.copytree(corpus, source)
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    try:
        return _timed(f"Ray, {cpus} worker{'s' if cpus > 1 else ' '}", cpus, source, "local", count)
    finally:
        ray.shutdown()


def _startup_cpu() -> float:
    """CPU-seconds one conversion worker spends before its first file (measured alone)."""
    tokenizer = StoresBuilder(MODEL, logging.getLogger("bench")).tokenizer_model
    done = subprocess.run(
        [sys.executable, "-c", _STARTUP, tokenizer],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    return float(done.stdout.strip().splitlines()[-1])


def _report(runs: list[Run], count: int, startup: float) -> None:
    _, ray1, ray2 = runs
    kinds = ["driver", "ray daemons", "workers", "other"]
    print("\nCPU-seconds of each run (load average at its start)")
    print(f"  {'run':16} {'wall s':>7} {'load':>5} " + " ".join(f"{k:>11}" for k in kinds))
    for run in runs:
        parts = " ".join(f"{run.cpu.get(k, 0.0):11.2f}" for k in kinds)
        print(f"  {run.name:16} {run.wall:7.2f} {run.load:5.2f} {parts}")
    print(f"\nOne worker's start-up, measured alone: {startup:.2f} CPU-s")
    print("CPU per file, ms (workers: less their start-up)")
    for run in runs:
        convert = (run.cpu.get("workers", 0.0) - run.workers * startup) / count
        driver = run.cpu.get("driver", 0.0) / count
        daemons = run.cpu.get("ray daemons", 0.0) / count
        print(
            f"  {run.name:16} workers {convert * 1000:7.1f}   driver {driver * 1000:6.1f}"
            f"   Ray daemons {daemons * 1000:6.1f}"
        )
    cores = os.cpu_count() or 1
    per_file = max((ray2.cpu.get("workers", 0.0) - 2 * startup) / count, 0.0)
    floor = max(sum(ray2.cpu.values()) / cores, startup + count * per_file / 2)
    print(
        f"Best 2-worker wall clock this work allows on {cores} cores: {floor:.2f} s "
        f"(its CPU-seconds over the cores, or one start-up plus half the files), "
        f"so at most {ray1.wall / floor:.2f}x one worker"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=40, help="generated PDFs (40+)")
    parser.add_argument(
        "--paragraphs", type=int, default=6, help="paragraphs per PDF (6: one page)"
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    logging.basicConfig(level=logging.ERROR)
    with tempfile.TemporaryDirectory(prefix="klea-ray-bench-") as tmp:
        work = Path(tmp)
        corpus = _corpus(work / "corpus", args.files, args.paragraphs)
        shutil.copytree(corpus, work / "local")
        runs = [_timed("local, 1 worker", 1, work / "local", None, args.files)]
        runs.append(_ray_run(corpus, work, 1, args.files))
        runs.append(_ray_run(corpus, work, 2, args.files))
    startup = _startup_cpu()
    local, ray1, ray2 = runs
    print(
        f"{args.files} text PDFs of {args.paragraphs} paragraphs, files per minute "
        f"(cores on this host: {os.cpu_count()})"
    )
    for run in runs:
        print(f"  {run.name:16}: {run.rate(args.files):8.1f}")
    print(f"Ray 2 workers / 1 worker: {ray1.wall / ray2.wall:.2f}x (target >= 1.6x)")
    print(f"Ray 1 worker / local    : {local.wall / ray1.wall:.2f}x (target >= 0.85x)")
    _report(runs, args.files, startup)


if __name__ == "__main__":
    main()
