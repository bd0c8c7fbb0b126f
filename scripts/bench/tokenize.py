"""Benchmark Unicode61Tokenizer against SQLite FTS5 indexing the same text.

Usage: ``uv run --frozen python scripts/bench/tokenize.py [corpus.jsonl] [--repeat N]``.
Reads the SciFact corpus (``<repo>/../shared/data/scifact/corpus.jsonl``) by default and
prints the best-of-N times and the ratio of FTS5's time to the Python tokenizer's
(1.0 means as fast as FTS5; the target is >= 0.25).
"""

from __future__ import annotations

import os
import sys

# This file is named like the standard library's ``tokenize``; keep its folder off the
# import path so ``import tokenize`` (done by ``inspect``) finds the real module.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
sys.modules.pop("tokenize", None)

import argparse  # noqa: E402
import json  # noqa: E402
import sqlite3  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from sci_etl_core.search.tokenize import Unicode61Tokenizer  # noqa: E402

DEFAULT = Path(__file__).resolve().parents[2].parent / "shared/data/scifact/corpus.jsonl"


def load(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        return [f"{row.get('title', '')}\n{row.get('text', '')}" for row in map(json.loads, handle)]


def fts5_seconds(texts: list[str]) -> float:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61 remove_diacritics 2')")
    start = time.perf_counter()
    db.executemany("INSERT INTO t(x) VALUES (?)", ((text,) for text in texts))
    db.commit()
    elapsed = time.perf_counter() - start
    db.close()
    return elapsed


def python_seconds(texts: list[str], method: str) -> tuple[float, int]:
    tokenize = getattr(Unicode61Tokenizer(), method)
    start = time.perf_counter()
    count = sum(len(tokenize(text)) for text in texts)
    return time.perf_counter() - start, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    texts = load(args.corpus)
    chars = sum(map(len, texts))
    fts5 = min(fts5_seconds(texts) for _ in range(args.repeat))
    print(f"corpus: {args.corpus} ({len(texts)} documents, {chars / 1e6:.1f} M characters)")
    print(f"FTS5 indexing:            {fts5:7.3f} s")
    for method in ("tokens", "words"):
        runs = [python_seconds(texts, method) for _ in range(args.repeat)]
        best = min(seconds for seconds, _ in runs)
        print(
            f"Unicode61Tokenizer.{method + '()':9} {best:7.3f} s  ({runs[0][1]} tokens)"
            f"  ratio {fts5 / best:.2f}x of FTS5 speed"
        )


if __name__ == "__main__":
    main()
