"""Start-up benchmark: how long each command takes from launch to answer, and its memory.

Run with ``uv run --frozen python scripts/bench/startup.py``. It builds the demo stores
from ``examples/corpus/papers`` once (Chroma + BM25 corpus + FTS5 index, in
``scripts/bench/.cache/startup/``; ``klea-stores-create build`` also exports the query
model to ONNX), then times each command as a fresh process, best of ``--repeat`` runs,
with its CPU time and peak RSS:

- ``klea-retrieve`` one question over the demo stores, today's path (sentence-transformers
  and torch for the query, ``KLEA_ONNX_QUERIES=0``) against the new one (the ONNX export
  through onnxruntime); target >= 5x faster end to end and under 2.5 s;
- ``klea-retrieve`` over the BM25 and FTS5 stores only, and over FTS5 alone (no model);
  target < 1 s;
- ``--help`` of every command (target < 1 s), ``map-lint`` and ``pre-check`` (< 2 s).

Bytecode: by default each command runs once unmeasured first, with Python's bytecode cache
in ``<work>/pycache`` (``PYTHONPYCACHEPREFIX``, whatever ``PYTHONDONTWRITEBYTECODE`` says),
so the timed runs read compiled modules as every run after the first does on an
installation. ``--no-bytecode-cache`` writes no bytecode (``PYTHONDONTWRITEBYTECODE=1``, no
cache of the bench's own): a module whose bytecode is not already beside its source is
compiled on every run, as on the first run after an install that compiled none (uv's
default) and on every run in an environment that sets ``PYTHONDONTWRITEBYTECODE``.

It prints a Markdown table for ``docs/benchmarks.md``.
"""

from __future__ import annotations

import sys

if sys.path and sys.path[0].rstrip("/").endswith("bench"):
    sys.path.pop(0)  # scripts/bench/tokenize.py would shadow the standard library's tokenize

import argparse
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "examples" / "corpus" / "papers"
BIN = Path(sys.executable).parent
QUESTION = "What is the likely range of equilibrium climate sensitivity?"


@dataclass(frozen=True)
class Timing:
    """The best wall-clock time and the peak RSS of one command over its runs."""

    label: str
    seconds: float
    cpu_seconds: float
    max_rss_mb: float
    target: str


def _run_once(
    argv: list[str], env: dict[str, str], ok: tuple[int, ...]
) -> tuple[float, float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{err[-2000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


@dataclass(frozen=True)
class Bytecode:
    """Where the timed processes find compiled modules, and whether they write them."""

    env: dict[str, str]
    warm_up: bool
    described: str

    @classmethod
    def cached(cls, folder: Path) -> Bytecode:
        """A bytecode cache of the bench's own, filled by an unmeasured first run."""
        env = {"PYTHONPYCACHEPREFIX": str(folder), "PYTHONDONTWRITEBYTECODE": ""}
        return cls(env, True, f"bytecode cached in {folder} by an unmeasured first run")

    @classmethod
    def unwritten(cls) -> Bytecode:
        """No bytecode written: modules without bytecode on disk compile on every run."""
        env = {"PYTHONPYCACHEPREFIX": "", "PYTHONDONTWRITEBYTECODE": "1"}
        return cls(env, False, "no bytecode written (PYTHONDONTWRITEBYTECODE=1)")


def measure(
    label: str,
    argv: list[str],
    target: str,
    repeat: int,
    bytecode: Bytecode,
    ok: tuple[int, ...] = (0,),
    **env: str,
) -> Timing:
    """Run ``argv`` ``repeat`` times as a fresh process; keep the fastest run."""
    full_env = {
        **os.environ,
        "KLEA_DOI_LOOKUP": "0",
        "HF_HUB_OFFLINE": "1",
        **bytecode.env,
        **env,
    }
    if bytecode.warm_up:
        _run_once(argv, full_env, ok)
    runs = [_run_once(argv, full_env, ok) for _ in range(repeat)]
    seconds, cpu, rss = min(runs)
    print(f"  {label}: {seconds:.2f} s ({cpu:.2f} s CPU), {rss:.0f} MB", file=sys.stderr)
    return Timing(label, seconds, cpu, rss, target)


def build_stores(work: Path) -> dict[str, Path]:
    """Build (once) the demo stores from the sample corpus."""
    stores = {
        "chroma": work / "chroma",
        "bm25": work / "papers.bm25",
        "fts5": work / "papers.sqlite",
    }
    if all(p.exists() for p in stores.values()):
        return stores
    source = work / "papers"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(CORPUS, source)
    command = [
        str(BIN / "klea-stores-create"),
        "build",
        str(source),
        "--store",
        f"chroma:{stores['chroma']}",
        "--collection",
        "papers",
        "--bm25-store",
        str(stores["bm25"]),
        "--fts5-store",
        str(stores["fts5"]),
        "--max-tokens",
        "256",
    ]
    print("building the demo stores (once) ...", file=sys.stderr)
    subprocess.run(command, check=True, env={**os.environ, "KLEA_DOI_LOOKUP": "0"})
    return stores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per command (best kept)")
    parser.add_argument(
        "--work", type=Path, default=ROOT / "scripts" / "bench" / ".cache" / "startup"
    )
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="write no bytecode: modules without it on disk compile on every run",
    )
    args = parser.parse_args()
    stores = build_stores(args.work)
    if args.no_bytecode_cache:
        bytecode = Bytecode.unwritten()
    else:
        bytecode = Bytecode.cached(args.work / "pycache")
    rows = _measure_all(stores, args.work, args.repeat, bytecode)
    _report(rows, args.repeat, bytecode)


def _measure_all(stores: dict[str, Path], work: Path, r: int, bytecode: Bytecode) -> list[Timing]:
    lexical = [
        str(BIN / "klea-retrieve"),
        "--bm25-store",
        str(stores["bm25"]),
        "--bm25-store",
        f"fts5:{stores['fts5']}",
        "-k",
        "3",
        QUESTION,
    ]
    retrieve = [lexical[0], "--store", f"papers=chroma:{stores['chroma']}", *lexical[1:]]
    fts5_only = [str(BIN / "klea-retrieve"), "--bm25-store", f"fts5:{stores['fts5']}", QUESTION]
    b = bytecode
    rows = [
        measure(
            "klea-retrieve, vector + BM25 + FTS5, today's path (torch)",
            retrieve,
            "",
            r,
            b,
            KLEA_ONNX_QUERIES="0",
        ),
        measure(
            "klea-retrieve, vector + BM25 + FTS5, ONNX query model",
            retrieve,
            ">= 5x, < 2.5 s",
            r,
            b,
        ),
        measure("klea-retrieve, BM25 (pickled corpus) + FTS5, no model", lexical, "< 1 s", r, b),
        measure("klea-retrieve, FTS5 only, no model", fts5_only, "< 1 s", r, b),
    ]
    for command in ("klea-retrieve", "klea-stores-create", "sci-etl-search", "klea-serve"):
        if (BIN / command).exists():
            argv = [str(BIN / command), "--help"]
            rows.append(measure(f"{command} --help", argv, "< 1 s", r, b))
    source = work / "papers"
    create = str(BIN / "klea-stores-create")
    lint = [create, "map-lint", str(source)]  # exit 1: the extracted metadata has gaps
    rows.append(measure("klea-stores-create map-lint", lint, "< 2 s", r, b, ok=(0, 1)))
    rows.append(
        measure("klea-stores-create pre-check", [create, "pre-check", str(CORPUS)], "< 2 s", r, b)
    )
    return rows


def _report(rows: list[Timing], r: int, bytecode: Bytecode) -> None:
    before, after = rows[0], rows[1]
    load = os.getloadavg()[0]
    print(
        f"\nOn {os.cpu_count()} CPU(s), best of {r} runs, {bytecode.described}; "
        f"load average {load:.1f}.\n"
    )
    print("| command | wall clock | CPU | peak RSS | target |")
    print("|---|---:|---:|---:|---|")
    for row in rows:
        print(
            f"| {row.label} | {row.seconds:.2f} s | {row.cpu_seconds:.2f} s "
            f"| {row.max_rss_mb:.0f} MB | {row.target} |"
        )
    ratio = before.seconds / after.seconds
    print(
        f"\nklea-retrieve one query: {ratio:.1f}x faster than today's path "
        f"({before.seconds:.2f} s -> {after.seconds:.2f} s wall clock, "
        f"{before.cpu_seconds / after.cpu_seconds:.1f}x less CPU), "
        f"{before.max_rss_mb / after.max_rss_mb:.1f}x less memory."
    )


if __name__ == "__main__":
    main()
