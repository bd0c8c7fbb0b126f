"""Does a file's chunks depend on the files converted before it in the same worker?

A conversion worker converts its batch one file after another in one process. pdfium keeps
font state for the whole process, so before the page renderer (issue 40) a page rendered
for OCR changed the character boxes read from the next files. This bench converts the same
files as one worker does (``FileProcessor``, the model-free path, OCR on, the default
MiniLM chunking), in one fresh process per run, twice: in the order given and reversed;
then compares each file's chunk texts, and each chunk's regions (page boxes in its
metadata), between the two orders. With ``--baseline-ref REF`` the code of REF (a detached
git worktree, this venv, as ``build_phases.py`` does) runs the same two orders first.

Per run and per file it prints wall time and CPU time: the converting process's own, that
of its live children (the page renderer) and that of the children it waited for
(tesseract). The cost of rendering in a child is this code's against the baseline's on the
files that were OCRed (tesseract CPU above zero), in the same run of the bench.

    OMP_THREAD_LIMIT=1 nice -n 5 uv run --frozen python scripts/bench/file_order.py
        [--source DIR] [--baseline-ref REF] [--json OUT] FILE [FILE ...]

``FILE`` names are looked up in ``--source`` (default: the shared wild set's ``pdf``) and
copied to a scratch folder per run; nothing is cached between runs.
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's: it moves
# behind the standard library on the import path (as in ``pdf_wild.py``).
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
_PACKAGES = ("klea-ingest", "klea-retrieval", "sci-etl-search")


def _wild_pdfs() -> Path:
    for parent in ROOT.parents:
        candidate = parent / "shared" / "data" / "realpapers-wild" / "pdf"
        if candidate.is_dir():
            return candidate
    return ROOT.parent / "shared" / "data" / "realpapers-wild" / "pdf"


def _use_code(code: str) -> None:
    """Import the klea packages from ``code`` (a checkout), not from this one."""
    if not code:
        return
    here = str(ROOT) + "/packages/"
    sys.path[:] = [p for p in sys.path if not p.startswith(here)]
    sys.path[1:1] = [f"{code}/packages/{name}/src" for name in _PACKAGES]


def _cpu_now() -> tuple[float, float, float]:
    """CPU seconds: this process, its live children (the renderer), its reaped children."""
    import resource

    import psutil

    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    live = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:
            continue
        live += times.user + times.system
    return (
        own.ru_utime + own.ru_stime,
        live,
        reaped.ru_utime + reaped.ru_stime,
    )


def _convert(code: str, source: Path, out: Path, names: list[str]) -> None:
    """In a fresh process: convert ``names`` in order as one worker does; write figures."""
    _use_code(code)
    import hashlib

    from conversion_cpu import one_worker_processor

    processor = one_worker_processor(source, "file-order")
    files: dict[str, Any] = {}
    for name in names:
        path = source / name
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        cpu0, wall0 = _cpu_now(), time.perf_counter()
        outcome = processor.convert(path, digest)
        cpu1, wall1 = _cpu_now(), time.perf_counter()
        docs = outcome.cached.docs if outcome.cached is not None else []
        files[name] = {
            "texts": [doc.page_content for doc in docs],
            "regions": [json.dumps(doc.metadata.get("regions"), sort_keys=True) for doc in docs],
            "error": outcome.error,
            "wall_s": wall1 - wall0,
            "own_s": cpu1[0] - cpu0[0],
            "renderer_s": cpu1[1] - cpu0[1],
            "tesseract_s": cpu1[2] - cpu0[2],
        }
    out.write_text(json.dumps(files), encoding="utf-8")


def _run(code: Path | None, names: list[str], origin: Path, work: Path) -> dict[str, Any]:
    """One run in a fresh process over a fresh copy; its figures, with the run's totals."""
    import resource

    source = work / "src"
    source.mkdir(parents=True)
    for name in names:
        shutil.copy(origin / name, source / name)
    out = work / "figures.json"
    cmd = [sys.executable, __file__, "_convert", str(code or ""), str(source), str(out), *names]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    files: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return {"files": files, "wall_s": wall, "cpu_s": cpu, "order": names}


def _differences(a: dict[str, Any], b: dict[str, Any], field: str) -> list[str]:
    return sorted(n for n in a["files"] if a["files"][n][field] != b["files"][n][field])


def _print_run(label: str, run: dict[str, Any]) -> None:
    print(f"\n{label}: wall {run['wall_s']:.1f} s, CPU {run['cpu_s']:.1f} s (process tree)")
    print(f"  {'file':<48} {'wall s':>7} {'own s':>6} {'render s':>8} {'tess s':>7} {'chunks':>6}")
    for name in run["order"]:
        f = run["files"][name]
        print(
            f"  {name[:48]:<48} {f['wall_s']:>7.2f} {f['own_s']:>6.2f} {f['renderer_s']:>8.2f}"
            f" {f['tesseract_s']:>7.2f} {len(f['texts']):>6}"
        )


def _ocr_totals(run: dict[str, Any], ocr_files: list[str]) -> dict[str, float]:
    rows = [run["files"][n] for n in ocr_files]
    return {
        "wall_s": round(sum(r["wall_s"] for r in rows), 2),
        "cpu_s": round(sum(r["own_s"] + r["renderer_s"] + r["tesseract_s"] for r in rows), 2),
        "own_s": round(sum(r["own_s"] for r in rows), 2),
        "renderer_s": round(sum(r["renderer_s"] for r in rows), 2),
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_convert":
        _convert(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]), sys.argv[5:])
        return
    from build_phases import baseline_tree

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("files", nargs="+")
    parser.add_argument("--source", type=Path, default=_wild_pdfs())
    parser.add_argument("--baseline-ref", help="also run the code of this git ref first")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    orders = {"given order": list(args.files), "reversed": list(reversed(args.files))}
    summary: dict[str, Any] = {}
    work = Path(tempfile.mkdtemp(prefix="file-order-"))
    try:
        with baseline_tree(args.baseline_ref) as baseline:
            codes = ([(f"baseline {args.baseline_ref}", baseline)] if baseline else []) + [
                ("this code", None)
            ]
            runs: dict[str, dict[str, Any]] = {}
            for code_label, code in codes:
                for order_label, names in orders.items():
                    label = f"{code_label}, {order_label}"
                    folder = work / f"run{len(runs)}"
                    runs[label] = _run(code, names, args.source, folder)
                    _print_run(label, runs[label])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    for code_label, _ in codes:
        given, reverse = runs[f"{code_label}, given order"], runs[f"{code_label}, reversed"]
        texts = _differences(given, reverse, "texts")
        regions = _differences(given, reverse, "regions")
        print(f"{code_label}: the orders differ in chunk texts of {len(texts)} file(s) {texts}")
        print(f"{code_label}: ... in chunk regions of {len(regions)} file(s) {regions}")
        summary[code_label] = {"texts_differ": texts, "regions_differ": regions}
    last = runs["this code, given order"]
    ocr_files = [n for n in args.files if last["files"][n]["tesseract_s"] > 0]
    print(f"\nOCRed files ({len(ocr_files)}): {ocr_files}")
    for label, run in runs.items():
        totals = _ocr_totals(run, ocr_files)
        summary.setdefault("ocr_files", {})[label] = totals
        print(
            f"  {label:<40} wall {totals['wall_s']:>7.2f} s  CPU {totals['cpu_s']:>7.2f} s"
            f"  (own {totals['own_s']:.2f}, renderer {totals['renderer_s']:.2f})"
        )
        summary.setdefault("runs", {})[label] = {
            "wall_s": round(run["wall_s"], 1),
            "cpu_s": round(run["cpu_s"], 1),
        }
    if args.baseline_ref:
        for order_label in orders:
            base = runs[f"baseline {args.baseline_ref}, {order_label}"]
            ours = runs[f"this code, {order_label}"]
            changed = _differences(base, ours, "texts")
            print(f"{order_label}: this code's chunk texts differ from the baseline's in {changed}")
            summary.setdefault("against_baseline", {})[order_label] = changed
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
