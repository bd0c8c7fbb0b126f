"""How often reference lists take the places a reader sees first, with and without the step back.

Run with ``uv run --frozen python scripts/bench/reference_crowding.py --stores DIR
--questions FILE [--questions FILE ...]`` over a folder built by ``real_questions.py
--out DIR`` (it holds ``stores.json``). Each question is asked through
:class:`~klea_utils.stores.pipeline.KleaPipeline` (every store of the build fused, the
passage focus, recency, ``-k`` hits per store, ``--limit`` kept) twice: with the default
focus, where reference-list chunks step back
(:mod:`~klea_utils.stores._retrieval.reference_lists`), and with
``FocusParams(reference_lists_back=False)``, the pipeline before it. Printed per setting:
the reference-list chunks among the passages kept, the questions that got at least one,
and the questions whose answer (the questions file's ``answer`` string, from its ``file``)
is among the passages kept. Asking one build the questions written for another (the
development papers' questions of a real-world build) measures what the issue names:
reference lists coming up for unrelated questions.
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's: it moves
# behind the standard library on the import path (``real_questions`` is imported from it).
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import logging
import time
from collections.abc import Sequence
from pathlib import Path

from real_questions import answer_rank, load_questions


def main(argv: Sequence[str] | None = None) -> int:
    from klea_utils.stores._retrieval.passage_focus import FocusParams
    from klea_utils.stores._retrieval.reference_lists import is_reference_list
    from klea_utils.stores.pipeline import KleaPipeline
    from klea_utils.stores.store_args import retriever_config_from_args

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stores", type=Path, required=True, help="folder with stores.json")
    parser.add_argument("--questions", type=Path, action="append", required=True)
    parser.add_argument("-k", type=int, default=5, help="hits per store")
    parser.add_argument("--limit", type=int, default=5, help="passages kept")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    questions = [q for path in args.questions for q in load_questions(path)]
    config = retriever_config_from_args(args.stores / "stores.json", [], [])
    settings = {
        "reference lists where the focus puts them": FocusParams(reference_lists_back=False),
        "reference lists step back (default)": FocusParams(),
    }
    for name, focus in settings.items():
        pipeline = KleaPipeline(config, k=args.k, focus=focus)
        domain = pipeline.domains[0]
        pipeline.load([domain])
        wall, cpu = time.perf_counter(), time.process_time()
        lists = crowded = answered = 0
        for q in questions:
            hits = pipeline.retrieve(domain, q.question, limit=args.limit).hits
            found = sum(is_reference_list(doc) for doc, _ in hits)
            lists += found
            crowded += found > 0
            passages = [(str(d.metadata.get("file_name", "")), d.page_content) for d, _ in hits]
            answered += answer_rank(q, passages) is not None
        pipeline.close()
        print(
            f"{name:45s} reference-list passages {lists:3d} of {args.limit * len(questions)}"
            f", in {crowded}/{len(questions)} questions, answered {answered}"
            f"  ({time.perf_counter() - wall:.0f} s wall, {time.process_time() - cpu:.0f} s CPU)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
