"""Benchmark ingestion on generated text PDFs: per-phase timings, and memory at N and 4N.

By default: ``klea-stores-create build`` of N generated text PDFs (Chroma and BM25), timed
per phase (conversion+chunking, embedding+store, the rest) and as a whole: wall time, CPU
time of the process tree, cores used, pages per wall-minute and per CPU-minute (see
``build_phases.py``). ``--baseline-ref REF`` first builds the same files with the code of
REF (a temporary git worktree run with this venv) and prints the ratios to it; ``--also
'LABEL:ARGS'`` adds builds of this code with extra arguments.

    uv run --frozen python scripts/bench/ingest.py --files 12 --baseline-ref main \
        --also 'one worker:--workers 1'

``--memory``: the earlier bench instead: ``chunk_all`` at N and 4N files, files per minute,
the parent's peak RSS at each size, and the peak RSS seen in any conversion worker (checked
against the cap). Target: parent peak RSS at 4N <= 1.15x at N, and workers within their cap
(plus one file's growth: the cap is checked before each file).

    uv run --frozen python scripts/bench/ingest.py --memory --files 20 --mem-limit 2000000000
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "packages/klea-ingest/tests"))

from ingest_corpus import sample_paragraphs, write_text_pdf
from klea_utils.stores.ingestion import StoresBuilder

sys.path.append(str(Path(__file__).resolve().parent))  # behind the stdlib: see tokenize.py

from build_phases import TimedBuild, baseline_tree, print_phases, run_build, run_plan


class _Sampler(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.parent_peak = 0
        self.worker_peak = 0
        self.stop = threading.Event()

    def run(self) -> None:
        me = psutil.Process()
        while not self.stop.is_set():
            self.parent_peak = max(self.parent_peak, me.memory_info().rss)
            for child in me.children(recursive=True):
                try:
                    if "spawn_main" in " ".join(child.cmdline()):
                        self.worker_peak = max(self.worker_peak, child.memory_info().rss)
                except psutil.Error:
                    pass
            time.sleep(0.05)


def _run(count: int, mem_limit: int, batch: int) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i in range(count):
            write_text_pdf(root / f"p{i:05d}.pdf", f"Paper {i}", sample_paragraphs(6, seed=i))
        builder = StoresBuilder(
            "huggingface:all-MiniLM-L6-v2", logging.getLogger("bench"), max_tokens=256
        )
        sampler = _Sampler()
        sampler.start()
        start = time.perf_counter()
        headings = builder.chunk_all(root, worker_mem_limit=mem_limit, worker_batch_size=batch)
        elapsed = time.perf_counter() - start
        sampler.stop.set()
        sampler.join()
        assert len(headings) == count, f"only {len(headings)}/{count} files chunked"
        return count / elapsed * 60, sampler.parent_peak, sampler.worker_peak


def _corpus(folder: Path, count: int, paragraphs: int) -> int:
    """``count`` generated text PDFs in ``folder``; their page count."""
    import pypdfium2

    folder.mkdir(parents=True)
    pages = 0
    for i in range(count):
        path = folder / f"p{i:05d}.pdf"
        write_text_pdf(path, f"Paper {i}", sample_paragraphs(paragraphs, seed=i))
        pdf = pypdfium2.PdfDocument(path)
        pages += len(pdf)
        pdf.close()
    return pages


def _phases(args: argparse.Namespace) -> None:
    plan = run_plan(args.baseline_ref, args.also, args.build_arg)
    runs: list[TimedBuild] = []
    with tempfile.TemporaryDirectory() as tmp, baseline_tree(args.baseline_ref) as baseline:
        pages = 0
        for n, (label, old, extra) in enumerate(plan):
            work = Path(tmp) / f"run{n}"
            pages = _corpus(work / "src", args.files, args.paragraphs)
            build = [str(work / "src"), "--collection", "bench", "--store"]
            build += [f"chroma:{work / 'chroma'}", "--bm25-store", str(work / "bm25.pkl")]
            runs.append(run_build(label, baseline if old else None, [*build, *extra]))
    print_phases(runs, pages)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=20, help="N (--memory: also 4N)")
    parser.add_argument("--paragraphs", type=int, default=6, help="paragraphs per PDF")
    parser.add_argument("--mem-limit", type=int, default=2_000_000_000)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--memory", action="store_true", help="the N/4N memory bench")
    parser.add_argument("--baseline-ref", help="also build with the code of this git ref")
    parser.add_argument("--also", action="append", default=[], metavar="LABEL:ARGS")
    parser.add_argument("--build-arg", action="append", default=[], help="extra build argument")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.WARNING)
    if not args.memory:
        _phases(args)
        return
    rows = []
    for count in (args.files, 4 * args.files):
        rate, parent, worker = _run(count, args.mem_limit, args.batch)
        rows.append((count, rate, parent, worker))
        print(
            f"{count:6d} files: {rate:8.1f} files/min, parent peak RSS {parent / 2**20:7.1f} MiB, "
            f"worker peak RSS {worker / 2**20:7.1f} MiB (cap {args.mem_limit / 2**20:.0f} MiB)"
        )
    ratio = rows[1][2] / rows[0][2]
    print(f"parent peak RSS ratio 4N/N: {ratio:.3f} (target <= 1.15)")


if __name__ == "__main__":
    main()
