"""Where conversion's CPU goes: the converting process against tesseract, file by file.

Converts and chunks each PDF in this one process, as a build's worker does (the model-free
path, OCR on, the default MiniLM chunking), and prints per file and in all the CPU time of
this process (reading, OCR page renders, structure, chunking, metadata) and of the
tesseract runs it waited for (``RUSAGE_CHILDREN``: OCR reading, OSD script and orientation
detection), with the pages and the chunks. The tesseract time is also split into its
OSD runs (``--psm 0``: script and orientation detection; count and CPU) and the rest
(reading pages), by timing each ``tesseract`` command this process starts. A build adds
each worker's start-up (about 3 CPU-s) and the store phase; see ``pdf_wild.py`` for those.

    OMP_THREAD_LIMIT=1 uv run --frozen python scripts/bench/conversion_cpu.py
        [--source DIR] FILE [FILE ...]

``FILE`` names are looked up in ``--source`` (default: the shared wild set's ``pdf``). The
files are copied to a scratch folder first; nothing is cached.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

_OSD = {"runs": 0, "cpu_s": 0.0}
"""OSD runs (``tesseract ... --psm 0``) this process waited for, and their CPU."""


def _timing_osd(run: Callable[..., Any]) -> Callable[..., Any]:
    """``subprocess.run`` that adds each OSD run's CPU (children's rusage) to :data:`_OSD`."""

    def timed(cmd: Any, *args: Any, **kwargs: Any) -> Any:
        is_osd = isinstance(cmd, list) and cmd[:1] == ["tesseract"] and "--psm" in cmd
        before = _cpu()[1]
        try:
            return run(cmd, *args, **kwargs)
        finally:
            if is_osd:
                _OSD["runs"] += 1
                _OSD["cpu_s"] += _cpu()[1] - before

    return timed


def _wild_pdfs() -> Path:
    """The shared wild set's ``pdf`` folder, found above this checkout (as ``pdf_wild.py``)."""
    root = Path(__file__).resolve().parents[2]
    for parent in root.parents:
        candidate = parent / "shared" / "data" / "realpapers-wild" / "pdf"
        if candidate.is_dir():
            return candidate
    return root.parent / "shared" / "data" / "realpapers-wild" / "pdf"


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _pages(path: Path) -> int:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    try:
        return len(document)
    finally:
        document.close()


def one_worker_processor(source: Path, logger_name: str) -> Any:
    """A warmed ``FileProcessor`` over ``source`` as one conversion worker runs it: the
    model-free path, OCR on, the default MiniLM chunking. klea is imported here, on the
    import path in force at the call (``file_order.py`` points it at another checkout)."""
    from klea_utils.stores._ingest.chunking.chunking import MINILM_MAX_TOKENS
    from klea_utils.stores._ingest.convert.file_processing import FileProcessor
    from klea_utils.stores.packaged_minilm import packaged_minilm_path

    processor = FileProcessor(
        source_path=source,
        max_tokens=MINILM_MAX_TOKENS,
        merge_peers=True,
        tokenizer_model=str(packaged_minilm_path()),
        do_ocr=True,
        device="cpu",
        artifacts_path=None,
        logger=logging.getLogger(logger_name),
    )
    processor.warm_up([".pdf"])
    return processor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--source", type=Path, default=_wild_pdfs())
    args = parser.parse_args()
    subprocess.run = _timing_osd(subprocess.run)  # type: ignore[assignment]

    work = Path(tempfile.mkdtemp(prefix="conversion-cpu-"))
    try:
        for name in args.files:
            shutil.copy(args.source / name, work / name)
        processor = one_worker_processor(work, "conversion-cpu")
        print(
            f"{'file':<50} {'pages':>5} {'chunks':>6} {'own CPU s':>9} {'tesseract s':>11}"
            f" {'OSD runs':>8} {'OSD s':>6}"
        )
        totals = [0, 0, 0.0, 0.0, 0, 0.0]
        for name in args.files:
            path = work / name
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            own0, ocr0 = _cpu()
            osd0 = dict(_OSD)
            outcome = processor.convert(path, digest)
            own1, ocr1 = _cpu()
            chunks = len(outcome.cached.docs) if outcome.cached else 0
            osd_runs, osd_s = _OSD["runs"] - osd0["runs"], _OSD["cpu_s"] - osd0["cpu_s"]
            row = [_pages(path), chunks, own1 - own0, ocr1 - ocr0, osd_runs, osd_s]
            totals = [a + b for a, b in zip(totals, row, strict=True)]
            print(
                f"{name[:50]:<50} {row[0]:>5} {row[1]:>6} {row[2]:>9.1f} {row[3]:>11.1f}"
                f" {row[4]:>8} {row[5]:>6.1f}"
            )
        pages, chunks, own, ocr, osd_runs, osd_s = totals
        print(
            f"{'all':<50} {pages:>5} {chunks:>6} {own:>9.1f} {ocr:>11.1f}"
            f" {osd_runs:>8} {osd_s:>6.1f}"
        )
        print(f"tesseract: {ocr / max(own + ocr, 1e-9):.0%} of conversion's CPU")
        print(f"OSD: {osd_s / max(ocr, 1e-9):.0%} of tesseract's CPU in {osd_runs} run(s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
