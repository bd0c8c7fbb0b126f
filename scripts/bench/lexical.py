"""Lexical search benchmark on SciFact: the text stores against raw FTS5, rank_bm25 and bm25s.

Run with ``uv run --frozen python scripts/bench/lexical.py``. Documents are title +
abstract (the stores keep them as two fields); each query is the OR of its words.
Prints index time, queries per second for the top 10 (the best of five passes, taken in
turns across the systems so machine load falls on all alike; with snippets where the
system makes them), the CPU time per query of the fastest pass, nDCG@10 against the
judgements, and the ratios the targets are set on. ``--fts5-only`` measures the FTS5
store and raw FTS5 SQL alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sci_etl_core.search.filters import SNIPPET_CLOSE, SNIPPET_ELLIPSIS, SNIPPET_OPEN
from sci_etl_core.search.query import Or, Term
from sci_etl_core.search.store_base import BM25Weights, SearchDocument
from sci_etl_core.search.store_memory import InMemoryTextSearchStore
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store
from sci_etl_core.search.tokenize import Unicode61Tokenizer

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "scifact"
WEIGHTS = BM25Weights()
TOKENIZER = Unicode61Tokenizer()
REPEATS = 5
"""Each system answers every query this many times, in turns; its fastest pass counts."""


def load(data: Path) -> tuple[list[dict[str, str]], dict[str, str], dict[str, set[str]]]:
    corpus = [json.loads(line) for line in (data / "corpus.jsonl").open(encoding="utf-8")]
    queries = {
        row["_id"]: row["text"]
        for row in map(json.loads, (data / "queries.jsonl").open(encoding="utf-8"))
    }
    qrels: dict[str, set[str]] = {}
    with (data / "qrels.tsv").open(encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            qid, doc, score = line.split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, set()).add(doc)
    return corpus, {q: t for q, t in queries.items() if q in qrels}, qrels


def ndcg10(ranked: list[str], relevant: set[str]) -> float:
    gain = sum(1 / math.log2(i + 2) for i, doc in enumerate(ranked[:10]) if doc in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    return gain / ideal


def query_words(text: str) -> list[str]:
    return list(dict.fromkeys(TOKENIZER.words(text)))


Runs = dict[str, list[str]]


class Result:
    def __init__(self, name: str, index_s: float, query_s: float, cpu_s: float, runs: Runs):
        self.name, self.index_s, self.query_s, self.runs = name, index_s, query_s, runs
        self.cpu_s = cpu_s


class System:
    """A built index: its name, how long it took to build, and a pass over every query."""

    def __init__(self, name: str, index_s: float, run: Callable[[], Runs]) -> None:
        self.name, self.index_s, self.run = name, index_s, run


def evaluate(result: Result, qrels: dict[str, set[str]]) -> float:
    return sum(ndcg10(result.runs[q], qrels[q]) for q in result.runs) / len(result.runs)


def build_store(
    name: str,
    make: Callable[[], object],
    docs: list[SearchDocument],
    queries: dict[str, str],
    loop: asyncio.AbstractEventLoop,
) -> System:
    store = make()
    started = time.perf_counter()
    loop.run_until_complete(store.index(docs))  # type: ignore[attr-defined]
    loop.run_until_complete(store.count())  # type: ignore[attr-defined]
    index_s = time.perf_counter() - started
    nodes = {q: Or(tuple(Term(w) for w in query_words(t))) for q, t in queries.items()}

    async def one_pass() -> Runs:
        runs: Runs = {}
        for qid, node in nodes.items():
            hits = await store.search(node, limit=10)  # type: ignore[attr-defined]
            runs[qid] = [hit.record_id for hit in hits]
        return runs

    return System(name, index_s, lambda: loop.run_until_complete(one_pass()))


def raw_fts5_index(corpus: list[dict[str, str]], path: Path) -> tuple[sqlite3.Connection, float]:
    """Create a plain FTS5 table at ``path`` holding ``corpus``; return it and the seconds taken."""
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    started = time.perf_counter()
    connection.execute(
        "CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, title, abstract, "
        "tokenize='unicode61 remove_diacritics 2')"
    )
    connection.execute("BEGIN")
    connection.executemany(
        "INSERT INTO t(id, title, abstract) VALUES (?, ?, ?)",
        [(row["_id"], row["title"], row["text"]) for row in corpus],
    )
    connection.execute("COMMIT")
    return connection, time.perf_counter() - started


def indexing_times(
    corpus: list[dict[str, str]], docs: list[SearchDocument], work: Path
) -> tuple[float, float]:
    """Best of three builds of raw FTS5 and of the FTS5 store, in turns, into fresh files."""
    raw = store = math.inf
    for attempt in range(3):
        connection, seconds = raw_fts5_index(corpus, work / f"raw-{attempt}.sqlite")
        connection.close()
        raw = min(raw, seconds)

        async def build(path: Path) -> float:
            target = AsyncSqliteFts5Store(path, weights=WEIGHTS)
            started = time.perf_counter()
            await target.index(docs)
            await target.count()
            elapsed = time.perf_counter() - started
            await target.aclose()
            return elapsed

        store = min(store, asyncio.run(build(work / f"store-{attempt}.sqlite")))
    return raw, store


def build_raw_fts5(corpus: list[dict[str, str]], queries: dict[str, str], path: Path) -> System:
    connection, index_s = raw_fts5_index(corpus, path)
    sql = (
        "SELECT id, snippet(t, -1, ?, ?, ?, 32) FROM t WHERE t MATCH ? "
        f"ORDER BY bm25(t, 0, {WEIGHTS.title}, {WEIGHTS.abstract}) LIMIT 10"
    )
    marks = (SNIPPET_OPEN, SNIPPET_CLOSE, SNIPPET_ELLIPSIS)

    def one_pass() -> Runs:
        runs: Runs = {}
        for qid, text in queries.items():
            match = " OR ".join(f'"{w}"' for w in query_words(text))
            rows = connection.execute(sql, (*marks, match)).fetchall()
            runs[qid] = [row[0] for row in rows]
        return runs

    return System("raw FTS5 bm25() SQL", index_s, one_pass)


def build_rank_bm25(corpus: list[dict[str, str]], queries: dict[str, str]) -> System:
    import numpy as np
    from rank_bm25 import BM25Okapi

    started = time.perf_counter()
    ids = [row["_id"] for row in corpus]
    model = BM25Okapi([TOKENIZER.words(f"{row['title']} {row['text']}") for row in corpus])
    index_s = time.perf_counter() - started

    def one_pass() -> Runs:
        runs: Runs = {}
        for qid, text in queries.items():
            scores = model.get_scores(query_words(text))
            top = np.argsort(-scores, kind="stable")[:10]
            runs[qid] = [ids[i] for i in top]
        return runs

    return System("rank_bm25 BM25Okapi", index_s, one_pass)


def build_bm25s(corpus: list[dict[str, str]], queries: dict[str, str]) -> System:
    import bm25s

    started = time.perf_counter()
    ids = [row["_id"] for row in corpus]
    model = bm25s.BM25()
    model.index(
        [TOKENIZER.words(f"{row['title']} {row['text']}") for row in corpus], show_progress=False
    )
    index_s = time.perf_counter() - started

    def one_pass() -> Runs:
        runs: Runs = {}
        for qid, text in queries.items():
            found, _ = model.retrieve([query_words(text)], k=10, show_progress=False, n_threads=1)
            runs[qid] = [ids[i] for i in found[0]]
        return runs

    return System("bm25s", index_s, one_pass)


def measure(systems: list[System]) -> list[Result]:
    """Time every system's pass over the queries, interleaved, and keep each one's fastest.

    Interleaving the passes spreads any change in machine load over every system alike,
    so the ratios are fairer than timing one system after another. The CPU time of the
    process (every thread, the FTS5 store's worker included) is kept too: on a shared
    machine it moves less with other work than the wall-clock time.
    """
    for system in systems:
        system.run()  # warm up caches and the first statement
    best = {system.name: math.inf for system in systems}
    cpu = dict(best)
    runs: dict[str, Runs] = {}
    for _ in range(REPEATS):
        for system in systems:
            started, cpu_started = time.perf_counter(), time.process_time()
            runs[system.name] = system.run()
            best[system.name] = min(best[system.name], time.perf_counter() - started)
            cpu[system.name] = min(cpu[system.name], time.process_time() - cpu_started)
    return [Result(s.name, s.index_s, best[s.name], cpu[s.name], runs[s.name]) for s in systems]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DATA, help="BEIR-style SciFact folder")
    parser.add_argument(
        "--fts5-only",
        action="store_true",
        help="measure the FTS5 store and raw FTS5 SQL alone (a few minutes on a busy machine)",
    )
    args = parser.parse_args()
    corpus, queries, qrels = load(args.data)
    docs = [SearchDocument(row["_id"], title=row["title"], abstract=row["text"]) for row in corpus]
    print(f"SciFact: {len(corpus)} documents, {len(queries)} judged queries (OR of their words)")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        loop = asyncio.new_event_loop()
        fts5_store = AsyncSqliteFts5Store(work / "store.sqlite", weights=WEIGHTS)
        systems = [
            build_store("AsyncSqliteFts5Store", lambda: fts5_store, docs, queries, loop),
            build_raw_fts5(corpus, queries, work / "raw.sqlite"),
        ]
        if not args.fts5_only:
            systems[1:1] = [
                build_store(
                    "InMemoryTextSearchStore",
                    lambda: InMemoryTextSearchStore(weights=WEIGHTS),
                    docs,
                    queries,
                    loop,
                )
            ]
            systems += [build_rank_bm25(corpus, queries), build_bm25s(corpus, queries)]
        results = measure(systems)
        loop.run_until_complete(fts5_store.aclose())
        loop.close()
        raw_index_s, store_index_s = indexing_times(corpus, docs, work)
    by_name = {result.name: result for result in results}
    print(
        f"\n{'system':26} {'index s':>8} {'queries/s':>10} {'CPU ms/q':>9} {'nDCG@10':>8}  snippets"
    )
    for result in results:
        qps = len(result.runs) / result.query_s
        cpu_ms = 1000 * result.cpu_s / len(result.runs)
        snippets = "yes" if "Store" in result.name or "raw" in result.name else "no"
        print(
            f"{result.name:26} {result.index_s:8.2f} {qps:10.1f} {cpu_ms:9.2f} "
            f"{evaluate(result, qrels):8.3f}  {snippets}"
        )

    def qps(name: str) -> float:
        return len(by_name[name].runs) / by_name[name].query_s

    fts5, memory = "AsyncSqliteFts5Store", "InMemoryTextSearchStore"
    raw, okapi = "raw FTS5 bm25() SQL", "rank_bm25 BM25Okapi"
    checks = [
        ("FTS5 store q/s vs raw FTS5", qps(fts5) / qps(raw), 0.97),
        ("FTS5 store q/s vs raw FTS5, CPU time", by_name[raw].cpu_s / by_name[fts5].cpu_s, 0.97),
        ("FTS5 store indexing speed vs raw inserts", raw_index_s / store_index_s, 0.5),
        ("FTS5 store nDCG@10", evaluate(by_name[fts5], qrels), 0.665),
    ]
    if not args.fts5_only:
        checks[2:2] = [
            ("FTS5 store q/s vs rank_bm25", qps(fts5) / qps(okapi), 2.0),
            ("memory store q/s vs rank_bm25", qps(memory) / qps(okapi), 2.0),
        ]
        checks.append(("memory store nDCG@10", evaluate(by_name[memory], qrels), 0.665))
    print(f"\n{'ratio':42} {'value':>7} {'target':>7}")
    failed = 0
    for label, value, target in checks:
        ok = value >= target
        failed += not ok
        print(f"{label:42} {value:7.3f} {target:7.3f}  {'ok' if ok else 'MISSED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
