"""Page PNG render time (issue 36): klea-serve's page image at 150 dpi with regions framed.

For each PDF of ``realpapers-dev`` (or ``--files``), renders its first ``--pages`` pages
``--runs`` times with ``page_png`` (one framed region per page) and prints the p50 and p95
per file and over all renders (target: p50 < 300 ms at 150 dpi), wall time, and the
process's CPU time per render over all of them.

    uv run --frozen python scripts/bench/page_png.py [--dpi 150] [--pages 5] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT.parent / "shared" / "data" / "realpapers-dev" / "pdf"
if not DEV.is_dir():
    DEV = Path("/work/shared/data/realpapers-dev/pdf")


def main() -> None:
    import pypdfium2 as pdfium
    from klea_utils.stores.serve.papers.page_image import page_png

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", nargs="*", type=Path)
    parser.add_argument("--dpi", type=int, default=150)
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    files = args.files or sorted(DEV.glob("*.pdf"))
    every: list[float] = []
    cpu: list[float] = []  # CPU seconds of the process per render (wall is the target)
    for path in files:
        pdf = pdfium.PdfDocument(str(path))
        count = min(len(pdf), args.pages)
        pdf.close()
        times = []
        for page in range(1, count + 1):
            region = [{"page": page, "bbox": [72.0, 600.0, 300.0, 700.0]}]
            for _ in range(args.runs):
                started, cpu_started = time.perf_counter(), time.process_time()
                page_png(path, page, dpi=args.dpi, regions=region)
                times.append(time.perf_counter() - started)
                cpu.append(time.process_time() - cpu_started)
        every.extend(times)
        times.sort()
        p95 = times[int(0.95 * (len(times) - 1))]
        p50 = statistics.median(times)
        print(f"{path.name[:50]:50} p50 {1000 * p50:6.0f} ms  p95 {1000 * p95:6.0f} ms")
    every.sort()
    p50, p95 = statistics.median(every), every[int(0.95 * (len(every) - 1))]
    print(
        f"all {len(every)} renders at {args.dpi} dpi: "
        f"p50 {1000 * p50:.0f} ms, p95 {1000 * p95:.0f} ms (wall); "
        f"CPU p50 {1000 * statistics.median(cpu):.0f} ms"
    )


if __name__ == "__main__":
    main()
