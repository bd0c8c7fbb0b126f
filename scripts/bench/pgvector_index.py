"""PGVector query time without and with klea's per-collection HNSW index (issue 28).

Run with ``uv run --frozen python scripts/bench/pgvector_index.py [--size 20000]
[--queries 100] [--workdir /tmp/pgvector-index]``.

A private PostgreSQL (``pgserver``) in the work folder holds two collections of the same
``--size`` random unit vectors (384 dimensions; latency does not depend on meaning), each
chunk with metadata ``{"n": i, "tenth": i % 10, "hundredth": i % 100}``:

- **before**: written as klea wrote collections until now (LangChain's ``PGVector``, no
  layout, no index), read through ``KleaPGVector``: every query scans the collection;
- **after**: created by ``KleaPGVector``: scoped ids and a partial HNSW index.

With ``--vectors scifact`` the vectors are the packaged all-MiniLM-L6-v2 embeddings of
SciFact passages (``bm25_scale.make_chunks``) and the queries those of SciFact claims,
embedded once into the work folder: random vectors in 384 dimensions have no neighbours
to speak of, so they give HNSW's worst recall, not a library's.

Times ``--queries`` searches (k=5 and k=50) on each, plus k=5 with a
filter matching 10% and 1% of the chunks (the 1% one comes back short from the index and
falls back to the exact scan), and the write time of each collection, also of a third
written inside ``bulk_load()`` (the index built once, at the end, as klea-ingest does).
Recall@k is the share of the exact top k (numpy, cosine) that the indexed search
returns. Prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

# This folder's tokenize.py would shadow the standard library's (numpy imports it): keep
# the folder off the path until bm25_scale is needed, then append it.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

DIMENSIONS = 384
BATCH = 2000


def _server(folder: Path) -> Any:
    """A private PostgreSQL with pgvector in ``folder`` (stopped by ``cleanup()``)."""
    folder.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import pgserver

        server = pgserver.get_server(folder / "pgdata", cleanup_mode="stop")
    server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    return server


def _scifact_vectors(folder: Path, size: int, n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """MiniLM embeddings of ``size`` SciFact passages and ``n_queries`` claims (cached)."""
    cache = folder / f"scifact-{size}-{n_queries}.npz"
    if cache.is_file():
        got = np.load(cache)
        return got["vectors"], got["queries"]
    sys.path.append(str(_HERE))
    from bm25_scale import make_chunks, queries
    from klea_utils.stores.embedding_models import load_embeddings

    model = load_embeddings("huggingface:all-MiniLM-L6-v2", device="cpu")
    started = time.perf_counter()
    vectors = np.array(model.embed_documents([t for _, t, _ in make_chunks(size)]), "float32")
    claims = np.array(model.embed_documents(queries(n_queries)), "float32")
    print(f"embedded {size} passages in {time.perf_counter() - started:.0f} s", flush=True)
    np.savez(cache, vectors=vectors, queries=claims)
    return vectors, claims


def _random_vectors(size: int, n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(28)
    vectors = rng.standard_normal((size, DIMENSIONS)).astype("float32")
    queries = rng.standard_normal((n_queries, DIMENSIONS)).astype("float32")
    return vectors, queries


def _write(store: Any, vectors: np.ndarray) -> float:
    started = time.perf_counter()
    for s in range(0, len(vectors), BATCH):
        part = range(s, min(s + BATCH, len(vectors)))
        store.add_embeddings(
            texts=[f"chunk {i}" for i in part],
            embeddings=vectors[s : part.stop].tolist(),
            metadatas=[{"n": i, "tenth": i % 10, "hundredth": i % 100} for i in part],
            ids=[f"bench.pdf:{i}" for i in part],
        )
    return time.perf_counter() - started


def _timed(run: Callable[[list[float]], Any], queries: np.ndarray) -> tuple[float, float]:
    times = []
    for q in queries:
        started = time.perf_counter()
        run(q.tolist())
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def _recall(store: Any, vectors: np.ndarray, queries: np.ndarray, k: int) -> float:
    found = 0
    for q in queries:
        exact = {f"bench.pdf:{i}" for i in np.argsort(-(vectors @ q))[:k]}
        got = store.similarity_search_with_score_by_vector(q.tolist(), k=k)
        found += len(exact & {d.id for d, _ in got})
    return found / (k * len(queries))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=20000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/pgvector-index"))
    parser.add_argument("--vectors", choices=("random", "scifact"), default="random")
    parser.add_argument(
        "--ef-sweep",
        default="40,100,200",
        help="least hnsw.ef_search values for the recall/latency sweep at k=5 and k=10",
    )
    args = parser.parse_args()
    from klea_utils.stores._retrieval import pgvector
    from klea_utils.stores._retrieval.pgvector import KleaPGVector
    from langchain_core.embeddings import FakeEmbeddings
    from langchain_postgres import PGVector

    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.vectors == "scifact":
        vectors, queries = _scifact_vectors(args.workdir, args.size, args.queries)
    else:
        vectors, queries = _random_vectors(args.size, args.queries)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)

    server = _server(args.workdir)
    url = str(server.get_uri()).replace("postgresql://", "postgresql+psycopg://", 1)
    embeddings = FakeEmbeddings(size=DIMENSIONS)
    stores: dict[str, Any] = {}
    written: dict[str, float] = {}
    for label in ("before", "after"):
        name = f"bench-{label}-{args.size}"
        if label == "before":  # created the way klea created collections until now
            PGVector(embeddings, connection=url, collection_name=name).delete_collection()
            plain = PGVector(embeddings, connection=url, collection_name=name)
            written[label] = _write(plain, vectors)
            plain._engine.dispose()
            stores[label] = KleaPGVector(embeddings, connection=url, collection_name=name)
        else:
            KleaPGVector(embeddings, connection=url, collection_name=name).delete_collection()
            stores[label] = KleaPGVector(embeddings, connection=url, collection_name=name)
            written[label] = _write(stores[label], vectors)
        print(f"{label}: {args.size} vectors written in {written[label]:.1f} s", flush=True)
    name = f"bench-bulk-{args.size}"  # as klea-ingest writes a new collection: index at the end
    KleaPGVector(embeddings, connection=url, collection_name=name).delete_collection()
    bulk = KleaPGVector(embeddings, connection=url, collection_name=name)
    started = time.perf_counter()
    with bulk.bulk_load():
        _write(bulk, vectors)
    written["bulk"] = time.perf_counter() - started
    bulk.delete_collection()
    bulk._engine.dispose()
    print(f"bulk: {args.size} vectors written and indexed in {written['bulk']:.1f} s", flush=True)

    cases: list[tuple[str, int, dict[str, Any] | None]] = [
        ("k=5", 5, None),
        ("k=50", 50, None),
        ("k=5, filter matching 10%", 5, {"tenth": 3}),
        ("k=5, filter matching 1%", 5, {"hundredth": 42}),
    ]
    rows = []
    for title, k, where in cases:
        cells = []
        for label in ("before", "after"):
            store = stores[label]

            def run(q: list[float], store: Any = store, k: int = k, where: Any = where) -> Any:
                return store.similarity_search_with_score_by_vector(q, k=k, filter=where)

            run(queries[0].tolist())  # warm the connection and the cache
            p50, p95 = _timed(run, queries)
            cells.append(f"{p50:.1f} / {p95:.1f} ms")
        rows.append(f"| {title} | {cells[0]} | {cells[1]} |")
    recall5 = _recall(stores["after"], vectors, queries, 5)
    recall50 = _recall(stores["after"], vectors, queries, 50)
    sweep = []
    for ef in [int(x) for x in args.ef_sweep.split(",") if x]:
        pgvector._MIN_EF_SEARCH = ef  # the floor of search_breadth()
        after = stores["after"]
        p50, _ = _timed(
            lambda q, s=after: s.similarity_search_with_score_by_vector(q, k=10), queries
        )
        r5, r10 = (_recall(after, vectors, queries, k) for k in (5, 10))
        sweep.append(f"| {ef} | {r5:.3f} | {r10:.3f} | {p50:.1f} ms |")
    for store in stores.values():
        store._engine.dispose()
    server.cleanup()

    kind = "MiniLM SciFact" if args.vectors == "scifact" else "random unit"
    print(f"\n{args.size} {kind} vectors ({DIMENSIONS} dims), {args.queries} queries\n")
    print("| query | before: scan, p50 / p95 | after: HNSW index, p50 / p95 |")
    print("|---|---|---|")
    print("\n".join(rows))
    print(
        f"| writing the collection | {written['before']:.1f} s | {written['after']:.1f} s "
        f"(in `bulk_load()`: {written['bulk']:.1f} s) |"
    )
    print(
        f"\nrecall of the indexed search against the exact top k: k=5 {recall5:.3f}, "
        f"k=50 {recall50:.3f}"
    )
    print("\n| ef_search | recall@5 | recall@10 | p50 at k=10 |\n|---|---|---|---|")
    print("\n".join(sweep))


if __name__ == "__main__":
    main()
