"""Ranking inside documents: the fused pipeline against passage re-scoring, same stores.

Run with ``uv run --frozen python scripts/bench/passage_rank.py --stores DIR --questions
FILE`` over a folder built by ``real_questions.py --out DIR`` (it holds ``stores.json``).

For each question every leg of the domain (vector, BM25 pickle, BM25 ``fts5:``) is asked
once for ``--pool`` hits; the ranked lists are kept in memory, and each configuration is
then replayed from them exactly as :class:`~klea_utils.stores.pipeline.KleaPipeline`
answers: fused by ``rrf_merge``, optionally re-scored by
:func:`~klea_utils.stores._retrieval.passage_focus.focus_rerank`, cut to the size of the
union of the legs' top ``k``, recency blend, widened with neighbours. Printed per system
(all legs fused, each leg alone): answer@1 and @3, with wall and CPU time per question of
the re-scoring alone (with the read of the pool's stored vectors). ``baseline`` is the
pipeline before the work (each leg ``k`` deep, no re-scoring); ``focus without pairs,
scope clause or answer kind`` is the focus before its fifth round (no word pairs, no
leading clause read as naming the document, no asked kind of value), and the rows after
it take one of them away; ``focus, document-naming words in full`` is the focus before
the question words that name a passage's document were scaled down (scope clause
included); ``focus, identifiers not raised`` is the focus before its tenth round weighed
the question's identifier words ("CMath", "GSM8K") three times (the tenth round's other
change, "zero" left a word, is in both rows); ``focus + stored vectors`` blends the pooled
passages' stored-vector cosine into the focus; the other rows are re-scoring settings,
``--grid`` tries many.
The stored vectors re-score a system only when it has the vector leg (BM25 alone reads
words only, as klea-retrieve with BM25 stores alone).
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's: it moves
# behind the standard library on the import path (``real_questions`` is imported from it).
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import itertools
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from real_questions import Question, answer_rank, load_questions

Lists = list[tuple[str, list[tuple[Any, float]]]]


@dataclass(frozen=True)
class Setting:
    name: str
    params: Any | None  # FocusParams, or None for the fused order as before


def ask_legs(
    folder: Path, questions: Sequence[Question], pool: int
) -> tuple[Any, dict[str, Lists]]:
    """Each question's per-leg ranked lists, ``pool`` deep, and the loaded pipeline."""
    from klea_utils.stores.pipeline import KleaPipeline
    from klea_utils.stores.store_args import retriever_config_from_args

    config = retriever_config_from_args(folder / "stores.json", [], [])
    pipeline = KleaPipeline(config, k=pool)
    domain = pipeline.domains[0]
    pipeline.load([domain])
    lists: dict[str, Lists] = {}
    for q in questions:
        sets: Lists = []
        for manager in pipeline._managers(domain):
            k_values = {domain: {s.name: pool for s in manager._stores_of(domain)}}
            sets.extend(manager.retrieve_per_store(domain, q.question, None, k_values))
        lists[q.id] = sets
    return pipeline, lists


def replay(
    pipeline: Any, question: str, sets: Lists, k: int, setting: Setting, clock: list[float]
) -> list[tuple[str, str]]:
    """The passages the pipeline returns for these lists under ``setting``."""
    from klea_utils.stores._retrieval.context import widen_hits
    from klea_utils.stores.utils import rerank_by_recency

    pipeline.focus = setting.params
    depth = setting.params.pool if setting.params is not None else k
    wall, cpu = time.perf_counter(), time.process_time()
    # The pipeline blends in stored vectors only where the vector leg is among the lists,
    # as klea-retrieve with BM25 stores alone has none to read.
    merged = pipeline._fuse(
        question,
        [(lb, hits[: max(k, depth)]) for lb, hits in sets],
        [k] * len(sets),
        pipeline.domains[0],
    )
    clock[0] += time.perf_counter() - wall
    clock[1] += time.process_time() - cpu
    merged = rerank_by_recency(merged)
    domain = pipeline.domains[0]
    widened, _ = widen_hits(
        merged, pipeline._neighbour_sources(domain), "neighbours", pipeline.context_tokens, None
    )
    return [(str(d.metadata.get("file_name", "")), d.page_content) for d, _ in widened]


def settings_to_try(grid: bool, pool: int) -> list[Setting]:
    from klea_utils.stores._retrieval.passage_focus import FocusParams

    chosen = [
        Setting("baseline", None),
        Setting("focus (defaults)", FocusParams()),
        Setting(
            "focus without pairs, scope clause or answer kind",
            FocusParams(phrase_share=0.0, scope_clause=False, answer_share=0.0),
        ),
        Setting("focus without answer kind", FocusParams(answer_share=0.0)),
        Setting("focus without word pairs", FocusParams(phrase_share=0.0)),
        Setting("focus without scope clause", FocusParams(scope_clause=False)),
        Setting("focus, document-naming words in full", FocusParams(identity_weight=1.0)),
        Setting("focus, identifiers not raised", FocusParams(identifier_weight=1.0)),
        Setting("focus, pool weights alone (no library IDF)", FocusParams(library_idf=False)),
        Setting("focus + stored vectors 0.35", FocusParams(vector_share=0.35)),
        *(
            Setting(
                f"focus + best sentence {share} top {top}",
                FocusParams(sentence_share=share, sentence_top=top),
            )
            for share, top in ((0.2, 5), (0.35, 5), (0.5, 5), (0.35, 8), (0.35, 3))
        ),
    ]
    if not grid:
        return chosen
    for scope, weight, vector_share, share in itertools.product(
        ("pool", "file"), (0.5, 0.6, 0.7, 0.8), (0.0, 0.2, 0.35, 0.5), (0.0, 0.25)
    ):
        params = FocusParams(
            weight=weight, window_share=share, vector_share=vector_share, idf_scope=scope
        )
        name = f"idf {scope} w {weight} vector {vector_share} window {share}"
        chosen.append(Setting(name, params))
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stores", type=Path, required=True, help="folder with stores.json")
    parser.add_argument("--questions", type=Path, action="append", required=True)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--pool", type=int, default=30)
    parser.add_argument("--grid", action="store_true", help="try a grid of settings")
    parser.add_argument("--misses", action="store_true", help="print the misses at 3")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="TEXT",
        help="replay only the settings whose name holds TEXT (repeatable)",
    )
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    questions = [q for path in args.questions for q in load_questions(path)]
    start = time.perf_counter()
    pipeline, lists = ask_legs(args.stores, questions, args.pool)
    print(
        f"asked {len(questions)} questions {args.pool} deep in {time.perf_counter() - start:.0f} s"
    )
    systems = {"fused": None, "vector": "vector store", "bm25": "BM25"}
    rows: dict[str, dict[str, Any]] = {}
    for setting in settings_to_try(args.grid, args.pool):
        if args.only and not any(text in setting.name for text in args.only):
            continue
        row: dict[str, Any] = {}
        clock = [0.0, 0.0]
        for system, prefix in systems.items():
            ranks: dict[str, int | None] = {}
            for q in questions:
                sets = [(lb, h) for lb, h in lists[q.id] if prefix is None or lb.startswith(prefix)]
                ranks[q.id] = answer_rank(
                    q, replay(pipeline, q.question, sets, args.k, setting, clock)
                )
            row[system] = ranks
        row["ms"] = (1000 * clock[0] / len(questions) / 3, 1000 * clock[1] / len(questions) / 3)
        rows[setting.name] = row
        cells = []
        for system in systems:
            ranks = row[system]
            at1 = sum(1 for r in ranks.values() if r is not None and r <= 1)
            at3 = sum(1 for r in ranks.values() if r is not None and r <= 3)
            cells.append(f"{system} {at1}/{at3}")
        print(
            f"{setting.name:45s} "
            + "  ".join(cells)
            + f"  ({row['ms'][0]:.1f} ms wall, {row['ms'][1]:.1f} ms CPU)"
        )
        if args.misses:
            for system in systems:
                missed = [qid for qid, r in row[system].items() if r is None or r > 3]
                print(f"    {system} misses: {' '.join(missed)}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    pipeline.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
