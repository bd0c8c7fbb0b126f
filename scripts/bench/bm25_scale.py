"""BM25 at scale: the rank_bm25 manager against the ``fts5:`` backend, in one run.

Run with ``uv run --frozen python scripts/bench/bm25_scale.py [--sizes 10000 100000]``.
Chunks are SciFact sentences (``../shared/data/scifact``); when a size exceeds the
sentences, windows of two and three adjacent sentences are added. Each (backend, size)
runs in a fresh subprocess, which writes the store as ingestion does (pickled batches,
or ``write_fts5_chunks``), then measures the manager's build (load) time, the resident
memory the loaded and queried store adds, and p50/p95 latency of ``retrieve`` (k=10) over SciFact
queries. Prints a table and the ratios the targets are set on (at the largest size:
fts5 p50 <= 0.2x and RSS <= 0.33x of rank_bm25's).
"""

from __future__ import annotations

import argparse
import json
import logging
import pickle
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "scifact"
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


def _rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


def make_chunks(size: int) -> list[tuple[str, str, dict[str, object]]]:
    """``size`` (id, text, metadata) chunks cut from SciFact abstracts."""
    sentences: list[tuple[str, str, str]] = []
    with (DATA / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            parts = [p.strip() for p in _SENTENCE.split(rec["text"]) if len(p.strip()) > 20]
            sentences.extend((rec["_id"], rec["title"], p) for p in parts)
    chunks: list[tuple[str, str, dict[str, object]]] = []
    for width in (1, 2, 3, 4, 5):
        for i in range(len(sentences) - width + 1):
            window = sentences[i : i + width]
            if len({w[0] for w in window}) != 1:
                continue
            doc_id, title = window[0][0], window[0][1]
            text = " ".join(w[2] for w in window)
            meta = {"file_name": f"{doc_id}.pdf", "title": title, "year": 2000 + len(chunks) % 25}
            chunks.append((f"{doc_id}.pdf:{len(chunks)}", text, meta))
            if len(chunks) == size:
                return chunks
    raise SystemExit(f"SciFact yields only {len(chunks)} chunks, fewer than {size}")


def queries(n: int) -> list[str]:
    with (DATA / "queries.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line)["text"] for line in fh][:n]


def worker(backend: str, size: int, n_queries: int) -> dict[str, float]:
    """Run one (backend, size) measurement in this process; returns the figures."""
    from klea_utils.stores.config import BM25StoreInfo, PerDomainConfig, RetrieverConfig
    from klea_utils.stores.fts5_writer import write_fts5_chunks
    from klea_utils.stores.retrieval.bm25 import BM25RetrieverManager
    from langchain_core.documents import Document

    docs = [Document(id=i, page_content=t, metadata=m) for i, t, m in make_chunks(size)]
    qs = queries(n_queries)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        if backend == "fts5":
            path = Path(tmp) / "bm25.sqlite"
            write_fts5_chunks(path, [(d.id or "", d) for d in docs], batch_size=2000)
            store_path = f"fts5:{path}"
        else:
            path = Path(tmp) / "bm25.pkl"
            with path.open("wb") as fh:
                for s in range(0, len(docs), 256):
                    pickle.dump(docs[s : s + 256], fh)
            store_path = str(path)
        write_s = time.perf_counter() - start
        del docs
        import gc

        gc.collect()
        config = RetrieverConfig(
            domains={"d": PerDomainConfig(bm25_stores=[BM25StoreInfo(name="s", path=store_path)])}
        )
        mgr = BM25RetrieverManager(config, logging.getLogger("bench"), default_k=10, k_max=10)
        rss0 = _rss()
        start = time.perf_counter()
        mgr.load("d")
        build_s = time.perf_counter() - start
        mgr.retrieve("d", qs[0])  # warm up: the fts5 store opens its file on first use
        lat = []
        for q in qs:
            t0 = time.perf_counter()
            mgr.retrieve("d", q)
            lat.append((time.perf_counter() - t0) * 1000)
        lat.sort()
        rss_mb = (_rss() - rss0) / 2**20  # what the loaded, queried store adds
        loaded = config.domains["d"].bm25_stores[0].loaded_object
        if hasattr(loaded, "close"):
            loaded.close()
    return {
        "write_s": write_s,
        "build_s": build_s,
        "rss_mb": rss_mb,
        "p50_ms": statistics.median(lat),
        "p95_ms": lat[min(len(lat) - 1, int(0.95 * len(lat)))],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--worker", nargs=2, metavar=("BACKEND", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], int(args.worker[1]), args.queries)))
        return
    rows: dict[tuple[str, int], dict[str, float]] = {}
    print(
        f"{'backend':<10}{'chunks':>8}{'write s':>9}{'build s':>9}{'RSS MiB':>9}"
        f"{'p50 ms':>9}{'p95 ms':>9}"
    )
    for size in args.sizes:
        for backend in ("rank_bm25", "fts5"):
            cmd = [
                sys.executable,
                __file__,
                "--worker",
                backend,
                str(size),
                "--queries",
                str(args.queries),
            ]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            r = rows[(backend, size)] = json.loads(out.strip().splitlines()[-1])
            print(
                f"{backend:<10}{size:>8}{r['write_s']:>9.2f}{r['build_s']:>9.2f}"
                f"{r['rss_mb']:>9.1f}{r['p50_ms']:>9.2f}{r['p95_ms']:>9.2f}",
                flush=True,
            )
    big = max(args.sizes)
    ref, fts = rows[("rank_bm25", big)], rows[("fts5", big)]
    p50 = fts["p50_ms"] / ref["p50_ms"]
    rss = fts["rss_mb"] / ref["rss_mb"] if ref["rss_mb"] > 0 else float("nan")
    print(
        f"\nat {big} chunks: fts5/rank_bm25 p50 = {p50:.3f}x (target <= 0.2x), "
        f"RSS = {rss:.3f}x (target <= 0.33x)"
    )


if __name__ == "__main__":
    main()
