"""A learned combination of the legs' signals inside a file, against the hand-set focus.

Issue 35 asks whether a learning-to-rank combination of the signals the pipeline already
has beats the passage focus (``FocusParams()``, two hand-set weights). For every question
of each set, the legs of a built folder are asked once (``passage_rank.ask_legs``, 30
deep), fused by RRF at the focus's pool depth, and each pooled passage gets its features:

- ``rrf``: its fused score over the best one's; ``rv``, ``rb``, ``rf``: its reciprocal rank
  in the vector, BM25-pickle and ``fts5:`` legs (0 when absent);
- ``win`` and ``cov``: the focus's best-window and whole-passage shares (the document's
  own name words discounted as the pipeline does);
- ``sim``: its stored vector's cosine to the question, min-max scaled over the pool;
- ``head``: share of the question's terms in its heading chain; ``numshare``: share of its
  words that are numbers; ``qnum``: share of the question's numbers it holds; ``loglen``.

A linear model is trained pairwise (logistic loss on the feature differences of the
answering passage and each non-answering passage of the same file, L2, numpy gradient
descent) and ranks each file's passages into the places the file holds in the fused order,
as the focus does (``within_files``). Printed: answer@1 / @3 over the pool (no cut, no
context widening, so below the pipeline's figures) for the hand-set focus, the fused order
alone, the model trained on one set and tested on the other, and five folds over all
questions; with wall and CPU time.

    uv run --frozen python scripts/bench/learned_focus.py \\
        --set wild=DIR:scripts/bench/questions/wild.jsonl \\
        --set dev=DIR2:../shared/data/realpapers-dev/questions.jsonl [--features a,b,...]

Folders come from ``real_questions.py --out DIR``. SciFact, Cranfield and CISI are not
used: each of their documents is one passage, where a within-file order changes nothing.
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import math
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from real_questions import Question, answer_rank, load_questions

FEATURES = ("rrf", "win", "cov", "rv", "rb", "rf", "sim", "head", "numshare", "qnum", "loglen")
Row = tuple[str, dict[str, float], bool]  # file key, features, answers the question


def question_rows(folder: Path, questions: Sequence[Question]) -> dict[str, list[Row]]:
    """Each question's pooled passages with their features and whether they answer."""
    import passage_rank
    from klea_utils.stores._retrieval.fusion import document_key
    from klea_utils.stores._retrieval.passage_focus import (
        FocusParams,
        file_key,
        focus_scores,
        heading_words,
        identity_terms,
        passage_terms,
        question_terms,
    )
    from klea_utils.stores.utils import rrf_merge

    pipe, lists = passage_rank.ask_legs(folder, questions, 30)
    domain = pipe.domains[0]
    pool = FocusParams().pool
    out: dict[str, list[Row]] = {}
    for q in questions:
        sets = [(label, hits[:pool]) for label, hits in lists[q.id]]
        merged = rrf_merge(sets)
        if not merged:
            out[q.id] = []
            continue
        docs = [d for d, _ in merged]
        ranks: dict[Any, dict[str, int]] = {}
        for label, hits in sets:
            leg = "v" if label.startswith("vector") else ("f" if "fts5" in label else "b")
            for rank, (d, _) in enumerate(hits, 1):
                ranks.setdefault(document_key(d), {}).setdefault(leg, rank)
        asked = question_terms(q.question)
        names = [identity_terms(d, asked) for d in docs]
        leads = [heading_words(d) for d in docs]
        texts = [d.page_content for d in docs]
        win = focus_scores(q.question, texts, FocusParams(window_share=1.0), leads, None, names)
        cov = focus_scores(q.question, texts, FocusParams(window_share=0.0), leads, None, names)
        sims = pipe._pool_similarities(domain, q.question, docs) or [None] * len(docs)
        known = [s for s in sims if s is not None]
        low, span = (min(known), max(known) - min(known)) if known else (0.0, 0.0)
        numbers = {t for t in asked if t.isdigit()}
        rows = []
        for (d, score), w, c, s in zip(merged, win, cov, sims, strict=True):
            leg_ranks = ranks.get(document_key(d), {})
            terms = passage_terms(d.page_content)
            chain = d.metadata.get("headings")
            heads = (
                set(passage_terms(" ".join(map(str, chain)))) if isinstance(chain, list) else set()
            )
            features = {
                "rrf": score / merged[0][1],
                "win": w,
                "cov": c,
                **{f"r{leg}": 1 / leg_ranks[leg] if leg in leg_ranks else 0.0 for leg in "vbf"},
                "sim": (s - low) / span if span and s is not None else 0.0,
                "head": len(heads & set(asked)) / max(1, len(asked)),
                "numshare": sum(t.isdigit() for t in terms) / max(1, len(terms)),
                "qnum": len(numbers & set(terms)) / len(numbers) if numbers else 0.0,
                "loglen": math.log1p(len(terms)),
            }
            hit = answer_rank(q, [(str(d.metadata.get("file_name", "")), d.page_content)]) == 1
            rows.append((file_key(d), features, hit))
        out[q.id] = rows
    return out


def placed_rank(rows: Sequence[Row], scores: Sequence[float]) -> int | None:
    """Rank of the first answering passage once each file's places are filled best first."""
    best: dict[str, list[int]] = {}
    for i in sorted(range(len(rows)), key=lambda i: -scores[i]):
        best.setdefault(rows[i][0], []).append(i)
    used: dict[str, int] = {}
    for rank, (key, _, _) in enumerate(rows, 1):
        i = best[key][used.get(key, 0)]
        used[key] = used.get(key, 0) + 1
        if rows[i][2]:
            return rank
    return None


Scorer = Callable[[dict[str, float]], float]


def linear(w: np.ndarray, features: Sequence[str]) -> Scorer:
    """The learned score: the weights over the named features."""
    return lambda f: float(np.array([f[n] for n in features]) @ w)


def evaluate(sets: dict[str, list[Row]], score: Scorer) -> tuple[int, int]:
    ranks = [placed_rank(rows, [score(f) for _, f, _ in rows]) for rows in sets.values()]
    return sum(r == 1 for r in ranks), sum(r is not None and r <= 3 for r in ranks)


def train(sets: dict[str, list[Row]], features: Sequence[str], iters: int = 3000) -> np.ndarray:
    """Pairwise logistic regression: the answering passage over each other of its file."""
    diffs = []
    for rows in sets.values():
        answering = [(key, f) for key, f, hit in rows if hit]
        if not answering:
            continue
        key, best = answering[0]
        for other_key, f, hit in rows:
            if not hit and other_key == key:
                diffs.append([best[n] - f[n] for n in features])
    x = np.array(diffs, dtype=float)
    w = np.zeros(len(features))
    for _ in range(iters):
        z = x @ w
        grad = -(x * (1.0 / (1.0 + np.exp(z)))[:, None]).mean(axis=0) + w / len(x)
        w -= 0.5 * grad
    return w


def hand_set(f: dict[str, float]) -> float:
    """The default focus (``FocusParams()``: weight 0.7, window share 0.25) on these features."""
    return 0.3 * f["rrf"] + 0.7 * (0.25 * f["win"] + 0.75 * f["cov"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", required=True, metavar="NAME=DIR:QUESTIONS")
    parser.add_argument("--features", default=",".join(FEATURES))
    args = parser.parse_args(argv)
    features = [f for f in args.features.split(",") if f]
    start, cpu = time.perf_counter(), time.process_time()
    sets: dict[str, dict[str, list[Row]]] = {}
    for spec in args.set:
        name, _, rest = spec.partition("=")
        folder, _, questions = rest.partition(":")
        sets[name] = question_rows(Path(folder), load_questions(Path(questions)))
    print(f"features: {', '.join(features)}")
    print("| set | questions | fused order | hand-set focus | learned (trained on the others) |")
    print("|---|---|---|---|---|")
    for name, rows in sets.items():
        others = {f"{n}:{q}": r for n, s in sets.items() if n != name for q, r in s.items()}
        learned = "-"
        if others:
            a1, a3 = evaluate(rows, linear(train(others, features), features))
            learned = f"{a1} / {a3}"
        (f1, f3), (h1, h3) = evaluate(rows, lambda f: f["rrf"]), evaluate(rows, hand_set)
        print(f"| {name} | {len(rows)} | {f1} / {f3} | {h1} / {h3} | {learned} |")
    everything = {f"{n}:{q}": r for n, s in sets.items() for q, r in s.items()}
    keys = sorted(everything)
    random.Random(1).shuffle(keys)
    at1 = at3 = 0
    for fold in range(5):
        test = {k: everything[k] for k in keys[fold::5]}
        w = train({k: v for k, v in everything.items() if k not in test}, features)
        a1, a3 = evaluate(test, linear(w, features))
        at1, at3 = at1 + a1, at3 + a3
    h1, h3 = evaluate(everything, hand_set)
    print(
        f"\nfive folds over all {len(keys)} questions: learned {at1} / {at3}, hand-set {h1} / {h3}"
    )
    print(f"({time.perf_counter() - start:.0f} s wall, {time.process_time() - cpu:.0f} s CPU)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
