"""Hybrid search benchmark on SciFact through AsyncHybridSearcher, and embedder throughput.

Run with ``uv run --frozen python scripts/bench/hybrid.py``. Documents are title + abstract
in an FTS5 text index and, chunked by ``SlidingWindowChunker``, in a SQLite vector memory
embedded with the packaged all-MiniLM-L6-v2. The passage vectors are cached on disk under
``scripts/bench/.cache/`` after the first run (encoding SciFact takes minutes on 2 cores).
Each query is the OR of its words, quoted, so its semantic text is its words.

Prints nDCG@10 and recall@100 for the lexical, semantic and hybrid (RRF and normalized
fusion) modes, each over a plain and a stemming (``stemming=True``, FTS5's porter
tokenizer) text index, and the embedder's throughput against a direct
``SentenceTransformer.encode`` on the same texts. Targets: hybrid nDCG@10 >= 0.70;
embedder >= 0.9x direct encode.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import sys
import tempfile
import time
from array import array
from pathlib import Path

from sci_etl_core.embeddings.chunking import SlidingWindowChunker
from sci_etl_core.embeddings.finder_async import AsyncSimilarArticleFinder
from sci_etl_core.embeddings.sentence_transformers_async import AsyncSentenceTransformerEmbedder
from sci_etl_core.embeddings.store_base import EmbeddingChunk
from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore
from sci_etl_core.search.fusion import normalized_score_fusion, reciprocal_rank_fusion
from sci_etl_core.search.hybrid_async import AsyncHybridSearcher, HybridParams, SearchMode
from sci_etl_core.search.store_base import SearchDocument
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store
from sci_etl_core.search.tokenize import Unicode61Tokenizer

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "scifact"
CACHE = Path(__file__).resolve().parent / ".cache"
CHUNKER = SlidingWindowChunker()


def load(data: Path) -> tuple[list[dict[str, str]], dict[str, str], dict[str, set[str]]]:
    """Return the corpus, the judged test queries, and their relevant documents."""
    with (data / "corpus.jsonl").open(encoding="utf-8") as handle:
        corpus = [json.loads(line) for line in handle if line.strip()]
    with (data / "queries.jsonl").open(encoding="utf-8") as handle:
        queries = {row["_id"]: row["text"] for row in map(json.loads, handle) if row}
    qrels: dict[str, set[str]] = {}
    with (data / "qrels.tsv").open(encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            qid, doc, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, set()).add(doc)
    return corpus, {q: t for q, t in queries.items() if q in qrels}, qrels


def ndcg10(ranked: list[str], relevant: set[str]) -> float:
    gain = sum(1 / math.log2(i + 2) for i, doc in enumerate(ranked[:10]) if doc in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    return gain / ideal


def recall100(ranked: list[str], relevant: set[str]) -> float:
    return len(set(ranked[:100]) & relevant) / len(relevant)


def or_query(text: str) -> str:
    words = dict.fromkeys(t.text for t in Unicode61Tokenizer().tokens(text))
    return " OR ".join(f'"{w}"' for w in words)


def passages(corpus: list[dict[str, str]]) -> list[tuple[str, int, str, str]]:
    rows = []
    for doc in corpus:
        for index, passage in enumerate(CHUNKER.chunk(f"{doc['title']} {doc['text']}")):
            rows.append((doc["_id"], index, passage, doc["title"]))
    return rows


async def cached_vectors(
    embedder: AsyncSentenceTransformerEmbedder, texts: list[str]
) -> list[array[float]]:
    key = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = CACHE / f"scifact-minilm-{key}.f32"
    dimension = embedder.dimension
    if path.exists():
        flat = array("f")
        flat.frombytes(path.read_bytes())
        print(f"vectors: cached in {path.name}", file=sys.stderr)
    else:
        start = time.perf_counter()
        vectors = await embedder.embed(texts)
        print(
            f"vectors: encoded {len(texts)} passages in {time.perf_counter() - start:.0f}s",
            file=sys.stderr,
        )
        flat = array("f", [x for v in vectors for x in v])
        CACHE.mkdir(exist_ok=True)
        path.write_bytes(flat.tobytes())
    return [flat[i * dimension : (i + 1) * dimension] for i in range(len(texts))]


async def throughput(embedder: AsyncSentenceTransformerEmbedder, texts: list[str]) -> None:
    model = embedder._load_sync()
    model.encode(texts[:64], batch_size=embedder.batch_size)  # warm up
    timings: dict[str, list[float]] = {"direct": [], "embedder": []}
    for _ in range(2):
        start = time.perf_counter()
        model.encode(texts, batch_size=embedder.batch_size, normalize_embeddings=True)
        timings["direct"].append(time.perf_counter() - start)
        start = time.perf_counter()
        await embedder.embed(texts)
        timings["embedder"].append(time.perf_counter() - start)
    direct = len(texts) / min(timings["direct"])
    ours = len(texts) / min(timings["embedder"])
    print(
        f"throughput on {len(texts)} passages: direct encode {direct:.1f}/s, "
        f"embedder {ours:.1f}/s, ratio {ours / direct:.2f} (target >= 0.90)"
    )


async def main(args: argparse.Namespace) -> None:
    corpus, queries, qrels = load(args.data)
    if args.queries:
        queries = dict(list(queries.items())[: args.queries])
    rows = passages(corpus)
    embedder = AsyncSentenceTransformerEmbedder(device="cpu")
    await embedder.load()
    vectors = await cached_vectors(embedder, [row[2] for row in rows])
    with tempfile.TemporaryDirectory() as tmp:
        documents = [SearchDocument(d["_id"], title=d["title"], abstract=d["text"]) for d in corpus]
        text_store = AsyncSqliteFts5Store(Path(tmp) / "text.sqlite")
        stemmed_store = AsyncSqliteFts5Store(Path(tmp) / "stemmed.sqlite", stemming=True)
        for store in (text_store, stemmed_store):
            await store.index(documents)
        memory = AsyncSqliteEmbeddingStore(Path(tmp) / "memory.sqlite")
        await memory.add(
            [
                EmbeddingChunk(rid, index, text, vector, {"title": title})
                for (rid, index, text, title), vector in zip(rows, vectors, strict=True)
            ]
        )
        finder = AsyncSimilarArticleFinder(embedder, memory)
        params = HybridParams(candidate_pool=100)
        runs: list[tuple[str, SearchMode, AsyncHybridSearcher]] = [
            ("semantic", "semantic", AsyncHybridSearcher(text_store, finder, params=params))
        ]
        for label, store in (("", text_store), (", stemmed", stemmed_store)):
            runs += [
                (f"lexical{label}", "lexical", AsyncHybridSearcher(store, finder, params=params)),
                (
                    f"hybrid rrf{label}",
                    "hybrid",
                    AsyncHybridSearcher(
                        store, finder, params=params, strategy=reciprocal_rank_fusion
                    ),
                ),
                (
                    f"hybrid normalized{label}",
                    "hybrid",
                    AsyncHybridSearcher(
                        store, finder, params=params, strategy=normalized_score_fusion
                    ),
                ),
            ]
        print(f"SciFact: {len(corpus)} documents, {len(rows)} passages, {len(queries)} queries")
        print(f"{'mode':<28}{'nDCG@10':>9}{'R@100':>9}{'q/s':>8}")
        for name, mode, searcher in runs:
            start = time.perf_counter()
            ndcg = recall = 0.0
            for qid, text in queries.items():
                outcome = await searcher.search(or_query(text), top_k=100, mode=mode)
                ranked = [hit.record_id for hit in outcome.hits]
                ndcg += ndcg10(ranked, qrels[qid])
                recall += recall100(ranked, qrels[qid])
            elapsed = time.perf_counter() - start
            n = len(queries)
            print(f"{name:<28}{ndcg / n:>9.4f}{recall / n:>9.4f}{n / elapsed:>8.1f}")
        await memory.aclose()
        await text_store.aclose()
        await stemmed_store.aclose()
    await throughput(embedder, [row[2] for row in rows[: args.throughput_texts]])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--queries", type=int, default=0, help="use only the first N queries")
    parser.add_argument("--throughput-texts", type=int, default=256)
    asyncio.run(main(parser.parse_args()))
