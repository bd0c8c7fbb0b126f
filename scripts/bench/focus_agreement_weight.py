"""The focus's weight scaled down where the legs agree, replayed against the default.

Run with ``uv run --frozen python scripts/bench/focus_agreement_weight.py --stores DIR
--questions FILE`` over a folder built by ``real_questions.py --out DIR`` (it holds
``stores.json``). The legs are asked once (``passage_rank.ask_legs``, 30 deep) and each
question is replayed through ``KleaPipeline``'s fusion and focus (``passage_rank.replay``)
with the focus weight ``0.7 * (1 - damping * agreement)``: ``agreement`` is the share of
the first three passages of the vector list's first file that every list (of two legs or
more) holds among its own first three of that file. Printed: fused answer@1 / @3 per
damping (0: the default), and the questions whose rank moved. Issue 35, ninth round: not
kept (it cost the real-world files at 1 and 3).
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from passage_rank import Lists, Setting, ask_legs, replay
from real_questions import answer_rank, load_questions

TOP = 3


def agreement(sets: Lists) -> float:
    """How much the legs agree on the first passages of the vector list's first file."""
    from klea_utils.stores._retrieval.fusion import document_key
    from klea_utils.stores._retrieval.passage_focus import file_key

    legs = {"vector" if label.startswith("vector") else "lexical" for label, _ in sets}
    if len(legs) < 2 or not sets[0][1]:
        return 0.0
    first = file_key(sets[0][1][0][0])
    tops = [
        {document_key(d) for d in [d for d, _ in hits if file_key(d) == first][:TOP]}
        for _, hits in sets
    ]
    return len(set.intersection(*tops)) / TOP


def main(argv: Sequence[str] | None = None) -> int:
    from klea_utils.stores._retrieval.passage_focus import FocusParams

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stores", type=Path, required=True, help="folder with stores.json")
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--damping", type=float, action="append", default=[])
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    questions = load_questions(args.questions)
    pipeline, lists = ask_legs(args.stores, questions, 30)
    ranks: dict[float, dict[str, int | None]] = {}
    for damping in [0.0, *(args.damping or [0.5, 1.0])]:
        ranks[damping] = {}
        for q in questions:
            sets = lists[q.id]
            params = FocusParams(weight=0.7 * (1.0 - damping * agreement(sets)))
            hits = replay(pipeline, q.question, sets, 5, Setting("damped", params), [0.0, 0.0])
            ranks[damping][q.id] = answer_rank(q, hits)
        at = [sum(1 for r in ranks[damping].values() if r is not None and r <= k) for k in (1, 3)]
        moved = [
            f"{qid} {ranks[0.0][qid]}->{r}"
            for qid, r in ranks[damping].items()
            if r != ranks[0.0][qid]
        ]
        print(f"damping {damping}: fused {at[0]}/{at[1]}  {' '.join(moved)}", flush=True)
    pipeline.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
