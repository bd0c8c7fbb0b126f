"""Query latency of the focus settings through ``KleaPipeline.retrieve``, same build, same run.

Run with ``uv run --frozen python scripts/bench/focus_latency.py --stores DIR --questions
FILE`` over a folder built by ``real_questions.py --out DIR`` (it holds ``stores.json``).
For each setting (the default focus, then the focus re-scored by each passage's best
sentence, ``FocusParams(sentence_share=0.35)``) a fresh pipeline is loaded and warmed with
one question, then every question is asked once (``k`` 5, the ``klea-retrieve`` default):
p50 / p95 wall and CPU time per question, and the ratio of the p50s to the default's. The
sentence vectors start empty in each pipeline, so the figures are those of questions whose
passages were not embedded before (a resident ``klea-serve`` embeds a passage once).
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import logging
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from real_questions import load_questions


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main(argv: Sequence[str] | None = None) -> int:
    from klea_utils.stores._retrieval.passage_focus import FocusParams
    from klea_utils.stores.pipeline import KleaPipeline
    from klea_utils.stores.store_args import retriever_config_from_args

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stores", type=Path, required=True, help="folder with stores.json")
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--share", type=float, default=0.35, help="sentence_share to time")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    questions = load_questions(args.questions)
    settings = {
        "focus (default)": FocusParams(),
        "+ best sentence": FocusParams(sentence_share=args.share),
    }
    base = None
    for name, params in settings.items():
        config = retriever_config_from_args(args.stores / "stores.json", [], [])
        pipeline = KleaPipeline(config, focus=params)
        domain = pipeline.domains[0]
        pipeline.load([domain])
        pipeline.retrieve(domain, "warm-up question about nothing in particular")
        walls, cpus = [], []
        for q in questions:
            wall, cpu = time.perf_counter(), time.process_time()
            pipeline.retrieve(domain, q.question)
            walls.append(1000 * (time.perf_counter() - wall))
            cpus.append(1000 * (time.process_time() - cpu))
        pipeline.close()
        p50 = statistics.median(walls)
        base = base or p50
        print(
            f"{name:18s} wall p50 {p50:6.1f} ms p95 {_percentile(walls, 0.95):6.1f} ms"
            f"  CPU p50 {statistics.median(cpus):6.1f} ms p95 {_percentile(cpus, 0.95):6.1f} ms"
            f"  p50 ratio {p50 / base:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
