"""Printed right-to-left pages read back: the converter's words against the page's source.

Run with ``uv run --frozen python scripts/bench/rtl_print_words.py PDF [PDF ...]
[--baseline-ref REF] [--json OUT]``. Each ``PDF`` has its source text next to it
(``.txt``, as ``rtl_chromium_pdf.py`` writes it: the words the page prints). Every file is
converted by the offline PDF path (no OCR) with this code and, with ``--baseline-ref``
(default ``main``), with the code of ``REF`` (a temporary git worktree, this venv), each
side in its own process; the run prints per file the word recall and precision of the
converted text against the source (bags of blank-separated words, NFKC; the zero-width
non-joiner is left out of the source, as the PDF's text layer has none), and each side's
wall and CPU time with their ratio.
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import json
import resource
import subprocess
import time
import unicodedata
from collections import Counter
from pathlib import Path

from build_phases import CHECKOUT_IMPORTS, ROOT, baseline_tree

_CONVERT = (
    CHECKOUT_IMPORTS
    + """
import json
from pathlib import Path
from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline
texts = {}
for name in sys.argv[3:]:
    doc, _ = convert_pdf_offline(Path(name), do_ocr=False)
    texts[name] = "\\n".join(i.text for i, _ in doc.iterate_items() if hasattr(i, "text"))
print(json.dumps(texts))
"""
)


def words(text: str) -> Counter[str]:
    """The bag of blank-separated words of ``text`` (NFKC, no zero-width non-joiner)."""
    return Counter(unicodedata.normalize("NFKC", text.replace("\u200c", "")).split())


def convert(files: list[Path], code: Path | None) -> tuple[dict[str, str], float, float]:
    """``files``' converted text with ``code``'s sources (None: this tree); wall and CPU s."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CONVERT, str(ROOT), str(code or ""), *map(str, files)],
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    texts: dict[str, str] = json.loads(done.stdout)
    return texts, wall, cpu


def score(source: str, read: str) -> tuple[float, float]:
    """Word recall and precision of ``read`` against ``source``."""
    want, got = words(source), words(read)
    common = sum((want & got).values())
    return common / max(sum(want.values()), 1), common / max(sum(got.values()), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pdfs", type=Path, nargs="+", help="PDFs, each with its .txt")
    parser.add_argument("--baseline-ref", default="main", help="git ref of the code before")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    files = [p.resolve() for p in args.pdfs]
    for path in files:
        if not path.with_suffix(".txt").is_file():
            parser.error(f"{path.name}: no source text {path.with_suffix('.txt').name} beside it")
    sides: dict[str, tuple[dict[str, str], float, float]] = {}
    with baseline_tree(args.baseline_ref) as baseline:
        if baseline is not None:
            sides[f"before ({args.baseline_ref})"] = convert(files, baseline)
        sides["after (this code)"] = convert(files, None)
    figures: dict[str, dict[str, object]] = {}
    for label, (texts, wall, cpu) in sides.items():
        print(f"{label}: wall {wall:.1f} s, CPU {cpu:.1f} s")
        for path in files:
            source = path.with_suffix(".txt").read_text(encoding="utf-8")
            recall, precision = score(source, texts[str(path)])
            print(f"  {path.name}: word recall {recall:.3f}, precision {precision:.3f}")
            figures.setdefault(label, {"wall_s": wall, "cpu_s": cpu})[path.name] = {
                "recall": recall,
                "precision": precision,
            }
    if len(sides) == 2:
        (_, old_wall, old_cpu), (_, wall, cpu) = sides.values()
        print(f"after / before: wall {wall / old_wall:.2f}, CPU {cpu / old_cpu:.2f}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
