"""klea-serve at a lab's scale: 100,000 passages in Chroma (or PGVector) + an ``fts5:`` index.

Run with ``uv run --frozen python scripts/bench/serve_scale.py [--size 100000]
[--backend chroma|pgvector] [--workdir /tmp/serve-papers] [--requests 60] [--clients 20]
[--seconds 30]``.

1. **Build, once** (kept in ``WORKDIR/scale-<backend>-<size>`` and reused): passages are
   SciFact sentences and windows of adjacent sentences (``bm25_scale.make_chunks``), one
   paper per SciFact abstract, with generated authors, journal and year; their vectors
   are random unit vectors (latency does not depend on meaning). The BM25 corpus is the
   ``fts5:`` index ``klea-stores-create build --fts5-store`` writes
   (``write_fts5_chunks``), also the search index; a ``stores.json`` names both.
   PGVector runs on ``pgserver`` (a private PostgreSQL in the work folder).
2. **Serve**: ``klea-serve --stores-config`` in a subprocess; start-up is the time until
   ``/api/health`` answers, and until it says the stores are loaded (the socket opens
   first; they load in the background); RSS the server's resident memory after the runs.
3. **Measure** ``--requests`` sequential calls each (SciFact questions) of ``retrieve``,
   ``search`` (lexical; hybrid when the service offers it), ``facets`` (all papers, and
   over a query's matches) and ``get_document``: p50 / p95. Then ``--clients``
   concurrent clients for ``--seconds`` s cycling through all of them: requests, errors,
   p50 / p95.

Targets (issue 28): start-up < 15 s, RSS < 2 GB, retrieve and search p50 < 150 ms,
facets < 300 ms, no error under load. Prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's: it moves
# behind the standard library on the import path (``serve_client`` is imported from it).
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import json
import logging
import random
import statistics
import time
from pathlib import Path
from typing import Any

import httpx
from bm25_scale import make_chunks, queries
from sci_etl_core.search import question_query
from serve_client import Call, load, percentile, start_server, timed

DIMENSIONS = 384
COLLECTION = "scale"
JOURNALS = ("Nature", "Cell", "Science", "PLOS ONE", "eLife", "BMJ", "Lancet", "JAMA")
SURNAMES = ("Smith", "Chen", "Garcia", "Müller", "Okafor", "Tanaka", "Silva", "Novak", "Haddad")
GIVEN = ("Ann", "Bo", "Carla", "Dev", "Eun", "Femi", "Gil", "Hana", "Ivo", "Jana", "Kofi")


def _papers_metadata(chunks: list[tuple[str, str, dict[str, Any]]]) -> None:
    """Give each paper generated authors and a journal, and each chunk its index."""
    rng = random.Random(28)
    per_paper: dict[str, dict[str, Any]] = {}
    seen: dict[str, int] = {}
    for _, _, meta in chunks:
        name = str(meta["file_name"])
        if name not in per_paper:
            authors = [
                f"{rng.choice(GIVEN)} {rng.choice(SURNAMES)}" for _ in range(rng.randint(1, 9))
            ]
            per_paper[name] = {
                "authors": list(dict.fromkeys(authors)),
                "journal": rng.choice(JOURNALS),
            }
        meta.update(per_paper[name])
        meta["chunk_index"] = seen.get(name, 0)
        seen[name] = meta["chunk_index"] + 1


def _unit_vectors(n: int, rng: random.Random) -> list[list[float]]:
    import numpy as np

    vectors = np.random.default_rng(rng.randrange(1 << 30)).standard_normal((n, DIMENSIONS))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype("float32").tolist()


def _pg_url(folder: Path) -> str:
    import pgserver

    server = pgserver.get_server(folder / "pgdata", cleanup_mode=None)
    server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    return str(server.get_uri())


def build(folder: Path, size: int, backend: str) -> Path:
    """Write the stores of ``size`` passages into ``folder`` once; return stores.json."""
    config_path = folder / "stores.json"
    if config_path.is_file():
        return config_path
    from klea_utils.stores._retrieval.chroma import encode_metadata
    from klea_utils.stores.fts5_writer import write_fts5_chunks
    from klea_utils.stores.utils import instantiate_vector_store
    from langchain_core.documents import Document
    from langchain_core.embeddings import FakeEmbeddings

    folder.mkdir(parents=True, exist_ok=True)
    chunks = make_chunks(size)
    _papers_metadata(chunks)
    started = time.perf_counter()
    docs = [(cid, Document(id=cid, page_content=t, metadata=m)) for cid, t, m in chunks]
    write_fts5_chunks(folder / "chunks.sqlite", docs, batch_size=2000)
    print(f"fts5: {len(docs)} chunks in {time.perf_counter() - started:.0f} s", flush=True)
    started = time.perf_counter()
    rng = random.Random(26)
    log = logging.getLogger("serve-scale")
    if backend == "chroma":
        uri = f"chroma:{folder / 'chroma'}"
        store = instantiate_vector_store(
            uri, COLLECTION, FakeEmbeddings(size=DIMENSIONS), log, True
        )
        for s in range(0, len(chunks), 4000):
            batch = chunks[s : s + 4000]
            store._collection.add(
                ids=[c[0] for c in batch],
                embeddings=_unit_vectors(len(batch), rng),
                documents=[c[1] for c in batch],
                metadatas=[encode_metadata(c[2]) for c in batch],
            )
    else:
        uri = "pgvector:" + _pg_url(folder)
        store = instantiate_vector_store(
            uri, COLLECTION, FakeEmbeddings(size=DIMENSIONS), log, True
        )
        with store.bulk_load():  # the collection's HNSW index built once, at the end
            for s in range(0, len(chunks), 2000):
                batch = chunks[s : s + 2000]
                store.add_embeddings(
                    texts=[c[1] for c in batch],
                    embeddings=_unit_vectors(len(batch), rng),
                    metadatas=[c[2] for c in batch],
                    ids=[c[0] for c in batch],
                )
    print(f"{backend}: {len(chunks)} vectors in {time.perf_counter() - started:.0f} s", flush=True)
    config = {
        "domains": {
            "papers": {
                "vector_stores": [{"name": COLLECTION, "path": uri}],
                "bm25_stores": [{"name": "chunks", "path": f"fts5:{folder / 'chunks.sqlite'}"}],
            }
        }
    }
    config_path.write_text(json.dumps(config, indent=1), encoding="utf-8")
    return config_path


def prepare(workdir: Path, size: int, backend: str) -> Path:
    """The stores of ``size`` passages under ``workdir``, built once; return stores.json.

    A PGVector library's private PostgreSQL is started again for the served run.
    """
    folder = workdir / f"scale-{backend}-{size}"
    if backend == "pgvector" and (folder / "pgdata").is_dir():
        _pg_url(folder)
    return build(folder, size, backend)


def operations(questions: list[str], files: list[str], hybrid: bool) -> dict[str, Call]:
    def check(response: httpx.Response) -> Any:
        response.raise_for_status()
        return response.json()

    def retrieve(c: httpx.Client, i: int) -> None:
        body = check(c.post("/api/retrieve", json={"query": questions[i % len(questions)]}))
        if not body["passages"]:
            raise RuntimeError("retrieve: no passages")

    def search(mode: str) -> Call:
        def run(c: httpx.Client, i: int) -> None:
            question = questions[i % len(questions)]
            params = {"q": question, "mode": mode, "limit": "10", "any_words": "true"}
            body = check(c.get("/api/search", params=params))
            if body["error"] or not body["hits"]:
                raise RuntimeError(f"search {mode}: {body['error'] or 'no hits'}")

        return run

    def facets(c: httpx.Client, i: int) -> None:
        check(c.get("/api/facets"))

    def facets_query(c: httpx.Client, i: int) -> None:
        check(c.get("/api/facets", params={"q": question_query(questions[i % len(questions)])}))

    def document(c: httpx.Client, i: int) -> None:
        body = check(c.get(f"/api/documents/{files[i % len(files)]}"))
        if not body["passages"]:
            raise RuntimeError("get_document: no passages")

    ops: dict[str, Call] = {
        "retrieve": retrieve,
        "search (lexical)": search("lexical"),
        "facets (all papers)": facets,
        "facets (a query's matches)": facets_query,
        "get_document": document,
    }
    if hybrid:
        ops["search (hybrid)"] = search("hybrid")
    return ops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--backend", choices=("chroma", "pgvector"), default="chroma")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/serve-papers"))
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--build-only", action="store_true")
    args = parser.parse_args()
    stores = prepare(args.workdir, args.size, args.backend)
    if args.build_only:
        return
    import psutil

    questions = queries(200)
    server, url, startup, ready = start_server(stores, wait_s=900)
    rows: list[tuple[str, str, str]] = [
        ("start-up (until /api/health answers)", f"{startup:.1f} s", ""),
        ("start-up (until /api/health says the stores are loaded)", f"{ready:.1f} s", ""),
    ]
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            health = client.get("/api/health").json()
            print(f"start-up {startup:.1f} s, loaded at {ready:.1f} s; {health}", flush=True)
            facets = client.get("/api/facets", params={"key": "journal"}).json()
            print(f"papers {facets['papers']}", flush=True)
            files = sorted({f"{q}" for q in some_files(client, questions)})
            hybrid = bool(health.get("vectors"))
            ops = operations(questions, files, hybrid)
            process = psutil.Process(server.pid)
            for name, op in ops.items():
                timed(op, client, 0)  # warm-up
                cpu = sum(process.cpu_times()[:2])
                times = [timed(op, client, i) for i in range(args.requests)]
                cpu_ms = (sum(process.cpu_times()[:2]) - cpu) / len(times) * 1000
                p50, p95 = statistics.median(times), percentile(times, 0.95)
                print(f"{name}: p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms", flush=True)
                note = f"server CPU {cpu_ms:.0f} ms per request"
                rows.append((name, f"{p50 * 1000:.0f} / {p95 * 1000:.0f} ms", note))
        loaded, errors = load(url, list(ops.values()), args.clients, args.seconds)
        lp50, lp95 = statistics.median(loaded), percentile(loaded, 0.95)
        rows.append(
            (
                f"{args.clients} clients, {args.seconds:g} s, all operations",
                f"{lp50 * 1000:.0f} / {lp95 * 1000:.0f} ms",
                f"{len(loaded)} requests, {errors} errors",
            )
        )
        rss = psutil.Process(server.pid).memory_info().rss / 2**20
        rows.append(("server RSS after the runs", f"{rss:.0f} MiB", ""))
    finally:
        server.terminate()
        server.wait(timeout=30)
    average = " / ".join(f"{x:.1f}" for x in psutil.getloadavg())
    print(f"\n{args.size} passages, {args.backend} + fts5 (load average {average}):\n")
    print("| measure | p50 / p95 or value | note |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def some_files(client: httpx.Client, questions: list[str]) -> list[str]:
    """Names of papers that the first 20 questions' lexical searches find."""
    names: list[str] = []
    for question in questions[:20]:
        params = {"q": question, "mode": "lexical", "any_words": "true"}
        body = client.get("/api/search", params=params).json()
        names += [h["file"] for h in body.get("hits", [])]
    return names or ["missing.pdf"]


if __name__ == "__main__":
    main()
