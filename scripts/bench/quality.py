"""Retrieval quality of klea retrieval and sci-etl-search on SciFact, Cranfield and CISI.

Run with ``uv run --frozen python scripts/bench/quality.py``; it prints a table and writes
it to ``docs/benchmarks-quality.md``. Collections are read from ``../shared/data/<name>/``
(BEIR layout), and each is evaluated on its judged queries with nDCG@10 and recall@100.

Every document is one text, ``title + " " + text``, and one chunk: the collections are
abstracts, so a document is embedded whole (all-MiniLM-L6-v2 reads its first 256 word
pieces and ignores the rest of a longer abstract).

- **klea**: a Chroma collection searched through ``VSRetriever`` with the packaged MiniLM
  (``load_embeddings()``), and a rank_bm25 corpus searched through ``BM25RetrieverManager``;
  each store returns 100 chunks, fused with ``rrf_merge`` (k=60), then optionally
  re-ranked with ``rerank_by_recency``.
- **sci-etl**: ``AsyncHybridSearcher`` over an ``AsyncSqliteFts5Store`` and an
  ``AsyncSqliteEmbeddingStore`` (candidate pool 100, RRF k=60) in its lexical, semantic
  and hybrid modes. The query is the OR of its words, quoted, so its semantic text is its
  words. The row *sci-etl hybrid over the klea Chroma collection* swaps the SQLite memory
  for klea's Chroma collection read through ``KleaVectorMemory`` (what ``klea-serve``
  does with the stores ``build`` writes).

The vectors of documents and queries are encoded once with sentence-transformers and
cached under ``scripts/bench/.cache/`` keyed by a hash of the texts; the pipelines read
them through a caching LangChain ``Embeddings`` (Chroma) and a caching ``AsyncEmbedder``
(sci-etl queries), and the sci-etl memory gets ``EmbeddingChunk`` rows directly.

``--embedder use --klea-only`` (issue 37) embeds documents and queries with the optional
``use:multilingual-v3`` instead of the packaged MiniLM (cached under ``use``): the klea
vector and hybrid rows for a library built with the multilingual extra.

``--multiscript`` (issue 37: English results must not change) measures instead the
lexical legs with ``MultiscriptTokenizer`` against the unicode61 tokens, in the same run:
klea's stemmed BM25 with today's tokens and with the Porter-over-unicode61 tokens it had
before, alone and fused; sci-etl's FTS5 index built with ``multiscript=True`` beside the
default ones, plain and stemmed, lexical and hybrid. It first logs, per collection, how
many documents and queries the two tokenizers cut differently (none: equal indexes). It
neither tunes nor writes the report. ``--lexical-only`` with it keeps the lexical rows
(klea's stemmed BM25, sci-etl's FTS5 plain and stemmed, each with both tokenizers) and
encodes nothing, for a machine without the vector cache.

``--votes`` (issue 37: one vote per leg in the fusion) adds to the klea pipeline the
lexical store ``klea-stores-create build`` writes beside the BM25 pickle, an ``fts5:``
index of the same documents (stemmed, multiscript, as a new build makes it), and scores
the hybrid of the vector store and both lexical stores, fused with one vote per store
(``rrf_merge``, as before) and with one vote per leg (``rrf_merge_legs``, what
``KleaPipeline`` does now), beside the stemmed hybrid of one lexical store, and logs the
per-query difference of the two (mean, queries better / worse, a bootstrap interval); it
needs the vector cache (or encodes), implies ``--klea-only`` and does not write the report.

``--documents onnx-fp32|onnx-int8`` (issue 40: a document embedder is kept only when the
answers do not move) embeds the documents with that onnxruntime variant of the build
instead of sentence-transformers, cached under its own name; queries keep
sentence-transformers, as ``klea-retrieve`` keeps its fp32 query path. It does not write
the report. The int8 check: ``--klea-only --collections scifact`` once with each.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import math
import pickle
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from klea_utils.stores._retrieval.bm25_scoring import (
    build_vectorizer,
    stemmed_preprocessing_func,
    top_documents,
)
from klea_utils.stores._retrieval.fusion import rrf_merge_legs
from klea_utils.stores._retrieval.passage_focus import focus_rerank
from klea_utils.stores.config import (
    BM25StoreInfo,
    PerDomainConfig,
    RetrieverConfig,
    VectorStoreInfo,
)
from klea_utils.stores.embedding_models import DEFAULT_EMBEDDING_MODEL, load_embeddings
from klea_utils.stores.pipeline import DEFAULT_FOCUS
from klea_utils.stores.retrieval.bm25 import BM25RetrieverManager
from klea_utils.stores.retrieval.vs import VSRetriever
from klea_utils.stores.sci_etl_vectors import KleaVectorMemory
from klea_utils.stores.utils import (
    instantiate_vector_store,
    normalize_text,
    rerank_by_recency,
    rrf_merge,
)
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from sci_etl_core.embeddings.async_base import AsyncEmbedder
from sci_etl_core.embeddings.finder_async import AsyncSimilarArticleFinder
from sci_etl_core.embeddings.sentence_transformers_async import (
    AsyncSentenceTransformerEmbedder,
    default_model_path,
)
from sci_etl_core.embeddings.store_base import EmbeddingChunk
from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore
from sci_etl_core.search import (
    AsyncHybridSearcher,
    AsyncSqliteFts5Store,
    FusionParams,
    FusionStrategy,
    HybridParams,
    PorterTokenizer,
    SearchDocument,
    Unicode61Tokenizer,
    normalized_score_fusion,
    parse_semantic_query,
    reciprocal_rank_fusion,
)
from sci_etl_core.search.multiscript import MultiscriptTokenizer

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
CACHE = Path(__file__).resolve().parent / ".cache"
USE_SPEC = "use:multilingual-v3"
"""``--embedder use``: the multilingual extra's embedder (issue 37)."""
REPORT = ROOT / "docs" / "benchmarks-quality.md"
DATASETS = ("scifact", "cranfield", "cisi")
DISPLAY = {"scifact": "SciFact", "cranfield": "Cranfield", "cisi": "CISI"}
DEPTH = 100  # each leg's candidates, and the depth of recall
TARGET = 0.70  # hybrid SciFact nDCG@10
TRAIN_QUERIES = 809
DOMAIN = "bench"

Ranker = Callable[[str], list[str]]


# -- collections and metrics ------------------------------------------------------------


@dataclass(frozen=True)
class Collection:
    """A BEIR-style collection: ``ids`` and ``texts`` aligned, judged queries, judgements."""

    name: str
    split: str
    ids: list[str]
    titles: list[str]
    texts: list[str]
    queries: dict[str, str]
    qrels: dict[str, set[str]]


def load(name: str, *, split: str = "test") -> Collection:
    """Read a collection; ``split="train"`` reads SciFact's train queries and judgements."""
    folder = DATA / name
    train = split == "train"
    queries_file = "queries_all.jsonl" if train else "queries.jsonl"
    qrels_file = "qrels_train.tsv" if train else "qrels.tsv"
    with (folder / "corpus.jsonl").open(encoding="utf-8") as handle:
        corpus = [json.loads(line) for line in handle if line.strip()]
    qrels: dict[str, set[str]] = {}
    with (folder / qrels_file).open(encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            qid, doc, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, set()).add(doc)
    with (folder / queries_file).open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return Collection(
        name=name,
        split=split,
        ids=[str(d["_id"]) for d in corpus],
        titles=[d.get("title") or "" for d in corpus],
        texts=[f"{d.get('title') or ''} {d['text']}".strip() for d in corpus],
        queries={str(r["_id"]): r["text"] for r in rows if str(r["_id"]) in qrels},
        qrels=qrels,
    )


def ndcg10(ranked: Sequence[str], relevant: set[str]) -> float:
    gain = sum(1 / math.log2(i + 2) for i, doc in enumerate(ranked[:10]) if doc in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    return gain / ideal


def recall100(ranked: Sequence[str], relevant: set[str]) -> float:
    return len(set(ranked[:DEPTH]) & relevant) / len(relevant)


def evaluate(collection: Collection, rank: Ranker) -> tuple[float, float]:
    """Mean nDCG@10 and recall@100 of ``rank`` over the collection's judged queries."""
    ndcg = recall = 0.0
    for qid, text in collection.queries.items():
        ranked = rank(text)
        ndcg += ndcg10(ranked, collection.qrels[qid])
        recall += recall100(ranked, collection.qrels[qid])
    n = len(collection.queries)
    return ndcg / n, recall / n


# -- the vector cache -------------------------------------------------------------------


class VectorCache:
    """Vectors of texts, encoded once with sentence-transformers and kept on disk.

    ``documents`` names another embedder for the collections' documents (queries keep
    sentence-transformers): ``onnx-fp32`` or ``onnx-int8``, the build's onnxruntime
    document variants (issue 40), cached under their own name.
    """

    def __init__(self, documents: str = "torch", embedder: str = "minilm") -> None:
        self._model: Any = None
        self.documents = documents
        self.embedder = embedder
        self.table: dict[str, np.ndarray] = {}

    def _use_vectors(self, texts: list[str]) -> np.ndarray:
        from klea_utils.stores.use_multilingual import UseMultilingualEmbeddings

        return np.asarray(UseMultilingualEmbeddings().embed_documents(texts), dtype=np.float32)

    def query_model(self) -> Embeddings:
        """The model that embeds a text the cache does not hold."""
        return load_embeddings(USE_SPEC if self.embedder == "use" else DEFAULT_EMBEDDING_MODEL)

    def _document_vectors(self, texts: list[str]) -> np.ndarray:
        from klea_utils.stores._ingest.store.document_embedder import TEXTS_PER_RUN
        from klea_utils.stores._ingest.store.int8_minilm import quantize_minilm_int8
        from klea_utils.stores.onnx_minilm import OnnxMiniLMEmbeddings, export_minilm_onnx

        path = export_minilm_onnx()
        if self.documents == "onnx-int8":
            path = quantize_minilm_int8(path)
        embedder = OnnxMiniLMEmbeddings(path, batch_size=TEXTS_PER_RUN)  # as the build runs it
        return np.asarray(embedder.embed_documents(texts), dtype=np.float32)

    def _encoder(self) -> Any:
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(default_model_path()), device="cpu")
        return self._model

    def load(self, label: str, texts: Sequence[str]) -> np.ndarray:
        """Return the vectors of ``texts`` (unit length), from the cache or encoded now."""
        texts = list(texts)
        key = hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()[:16]
        other = label.endswith("-docs") and self.documents != "torch"
        # "-1": one text per run, as builds embed since issue 40's per-text int8 (the cache of
        # batched int8 vectors, which depend on their batch, is not reused).
        variant = f"-{self.documents}-1" if other else ""
        if self.embedder == "use":
            other, variant = False, ""
        path = CACHE / f"quality-{label}-{self.embedder}{variant}-{key}.npy"
        if path.exists():
            vectors = np.load(path)
        else:
            start, cpu = time.perf_counter(), time.process_time()
            if self.embedder == "use":
                vectors = self._use_vectors(texts)
            elif other:
                vectors = self._document_vectors(texts)
            else:
                vectors = (
                    self._encoder()
                    .encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
                    .astype(np.float32)
                )
            log(
                f"{label}{variant}: encoded {len(texts)} texts in "
                f"{time.perf_counter() - start:.0f} s ({time.process_time() - cpu:.0f} CPU-s)"
            )
            CACHE.mkdir(exist_ok=True)
            np.save(path, vectors)
        self.table.update(zip(texts, vectors, strict=True))
        return vectors


class CachedEmbeddings(Embeddings):
    """LangChain ``Embeddings`` answering from a :class:`VectorCache`, else from ``inner``."""

    def __init__(self, cache: VectorCache, inner: Callable[[], Embeddings]) -> None:
        self.cache, self._inner_factory, self._inner = cache, inner, None
        self.misses = 0

    def _fill(self, texts: list[str]) -> None:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache.table))
        if missing:
            self.misses += len(missing)
            self._inner = self._inner or self._inner_factory()
            vectors = self._inner.embed_documents(missing)
            self.cache.table.update(zip(missing, np.asarray(vectors), strict=True))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self._fill(texts)
        return [self.cache.table[t].tolist() for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class CachedEmbedder(AsyncEmbedder):
    """An ``AsyncEmbedder`` answering from a :class:`VectorCache`, else from the packaged MiniLM."""

    def __init__(self, cache: VectorCache) -> None:
        self.cache, self._inner = cache, None
        self.misses = 0

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache.table))
        if missing:
            self.misses += len(missing)
            self._inner = self._inner or AsyncSentenceTransformerEmbedder(device="cpu")
            vectors = await self._inner.embed(missing)
            self.cache.table.update(zip(missing, np.asarray(vectors), strict=True))
        return [self.cache.table[t].tolist() for t in texts]


def or_query(text: str) -> str:
    """The OR of the query's words, each quoted (sci-etl's lexical query)."""
    words = dict.fromkeys(t.text for t in Unicode61Tokenizer().tokens(text))
    return " OR ".join(f'"{w}"' for w in words)


def encode(cache: VectorCache, collection: Collection) -> np.ndarray:
    """Load or encode the documents and both pipelines' query texts; return the documents'."""
    vectors = cache.load(f"{collection.name}-docs", collection.texts)
    queries = list(collection.queries.values())
    label = f"{collection.name}-{collection.split}"
    cache.load(f"{label}-klea-queries", [normalize_text(q) for q in queries])
    semantic = [parse_semantic_query(or_query(q))[1] for q in queries]
    cache.load(f"{label}-sci-queries", [s for s in semantic if s.strip()])
    return vectors


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- klea retrieval ---------------------------------------------------------------------


def file_names(hits: list[tuple[Document, float]]) -> list[str]:
    return [str(doc.metadata["file_name"]) for doc, _ in hits]


def stemmed_bm25_by_tokens(
    docs: list[Document],
) -> dict[str, Callable[[str], list[tuple[Document, float]]]]:
    """klea's stemmed BM25 over ``docs`` with the tokens it has today
    (``stemmed_preprocessing_func``: Porter over ``MultiscriptTokenizer``) and with those it
    had before (Porter over the unicode61 twin), by label."""
    unicode61 = PorterTokenizer()

    def before(text: str) -> list[str]:
        return unicode61.words(normalize_text(text))

    out: dict[str, Callable[[str], list[tuple[Document, float]]]] = {}
    for label, tokens in (("multiscript", stemmed_preprocessing_func), ("unicode61", before)):
        index = build_vectorizer(docs, tokens)

        def keyword(
            query: str, index: Any = index, tokens: Callable[[str], list[str]] = tokens
        ) -> list[tuple[Document, float]]:
            return top_documents(index, docs, tokens(query), DEPTH)

        out[label] = keyword
    return out


def as_documents(collection: Collection) -> list[Document]:
    return [
        Document(id=i, page_content=t, metadata={"file_name": i, "title": title})
        for i, t, title in zip(collection.ids, collection.texts, collection.titles, strict=True)
    ]


class KleaPipeline:
    """Chroma (``VSRetriever``) and rank_bm25 (``BM25RetrieverManager``), fused by ``rrf_merge``."""

    def __init__(self, collection: Collection, cache: VectorCache, folder: Path) -> None:
        logger = logging.getLogger("quality.klea")
        self.embeddings = CachedEmbeddings(cache, cache.query_model)
        docs = as_documents(collection)
        uri = f"chroma:{folder / 'chroma'}"
        store = instantiate_vector_store(uri, DOMAIN, self.embeddings, logger, create=True)
        self.store = store
        self.docs = docs
        for start in range(0, len(docs), 1000):
            batch = docs[start : start + 1000]
            store.add_documents(batch, ids=[str(d.id) for d in batch])
        corpus = folder / "corpus.bm25"
        with corpus.open("wb") as handle:
            pickle.dump(docs, handle)
        depth = {"default_k": DEPTH, "k_max": 10 * DEPTH}

        def config(stemming: bool) -> RetrieverConfig:
            bm25 = BM25StoreInfo(name="bm25", path=str(corpus), stemming=stemming, **depth)
            vectors = VectorStoreInfo(name=DOMAIN, path=uri, **depth)
            domain = PerDomainConfig(vector_stores=[vectors], bm25_stores=[bm25])
            return RetrieverConfig(domains={DOMAIN: domain})

        self.vectors = VSRetriever(
            config(False), logger, embedding_model="huggingface:all-MiniLM-L6-v2"
        )
        self.vectors.embeddings = self.embeddings  # the cached model, not a second load
        self.bm25 = BM25RetrieverManager(config(False), logger)
        self.bm25_stemmed = BM25RetrieverManager(config(True), logger)

    def keyword(self, stemmed: bool) -> BM25RetrieverManager:
        return self.bm25_stemmed if stemmed else self.bm25

    def fused(
        self, query: str, depth: int = DEPTH, stemmed: bool = False
    ) -> list[tuple[Document, float]]:
        k_values = {DOMAIN: {DOMAIN: depth, "bm25": depth}}
        return rrf_merge(
            [
                ("vector store", self.vectors.retrieve(DOMAIN, query, k_values=k_values)),
                ("BM25", self.keyword(stemmed).retrieve(DOMAIN, query, k_values=k_values)),
            ]
        )

    def candidates(self) -> dict[str, tuple[Ranker, Callable[[], Ranker]]]:
        """Hybrid configurations to choose from on training queries: depth and stemming.

        Each maps to a ranker for the train queries, whose BM25 leg is fetched once at the
        largest depth and cut (its top 100 is the start of its top 300), and a factory of
        the pipeline's own ranker, for the test queries.
        """
        bm25: dict[tuple[str, bool], list[tuple[Document, float]]] = {}

        def fused(query: str, depth: int, stemmed: bool) -> list[str]:
            if (query, stemmed) not in bm25:
                k_values = {DOMAIN: {"bm25": 3 * DEPTH}}
                found = self.keyword(stemmed).retrieve(DOMAIN, query, k_values=k_values)
                bm25[query, stemmed] = found
            # Chroma's index is approximate: its top 100 is not the start of its top 300.
            vectors = self.vectors.retrieve(DOMAIN, query, k_values={DOMAIN: {DOMAIN: depth}})
            keyword = bm25[query, stemmed][:depth]
            return file_names(rrf_merge([("vector store", vectors), ("BM25", keyword)]))

        out: dict[str, tuple[Ranker, Callable[[], Ranker]]] = {}
        for stemmed in (False, True):
            for depth in (DEPTH, 3 * DEPTH):
                words = ", stemmed BM25" if stemmed else ""
                out[f"klea hybrid, each store {depth} deep{words}"] = (
                    lambda q, depth=depth, stemmed=stemmed: fused(q, depth, stemmed),
                    lambda depth=depth, stemmed=stemmed: (
                        lambda q: file_names(self.fused(q, depth, stemmed))
                    ),
                )
        return out

    def rankers(self) -> dict[str, Ranker]:
        fused: dict[str, list[tuple[Document, float]]] = {}

        def hybrid(query: str) -> list[tuple[Document, float]]:
            if query not in fused:  # the recency row re-ranks the same fused list
                fused[query] = self.fused(query)
            return fused[query]

        ids = file_names
        return {
            "klea BM25 (rank_bm25)": lambda q: ids(self.bm25.retrieve(DOMAIN, q)),
            "klea BM25, stemmed": lambda q: ids(self.bm25_stemmed.retrieve(DOMAIN, q)),
            "klea vector (Chroma, MiniLM)": lambda q: ids(self.vectors.retrieve(DOMAIN, q)),
            "klea hybrid (RRF)": lambda q: ids(hybrid(q)),
            "klea hybrid (RRF) + recency": lambda q: ids(rerank_by_recency(hybrid(q))),
            "klea hybrid (RRF), stemmed BM25": lambda q: ids(self.fused(q, stemmed=True)),
            "klea hybrid (RRF), stemmed BM25 + passage focus": self.focused,
        }

    def multiscript_rankers(self) -> dict[str, Ranker]:
        """Issue 37's check on English: the stemmed BM25 leg over the same corpus with the
        tokens it has today (``stemmed_preprocessing_func``: Porter over
        ``MultiscriptTokenizer``) and with those it had before (Porter over the unicode61
        twin), alone and fused with the vector leg as ``fused`` does."""
        k_values = {DOMAIN: {DOMAIN: DEPTH}}
        out: dict[str, Ranker] = {}
        for label, keyword in stemmed_bm25_by_tokens(self.docs).items():

            def hybrid(query: str, keyword: Callable[..., Any] = keyword) -> list[str]:
                vectors = self.vectors.retrieve(DOMAIN, query, k_values=k_values)
                return file_names(rrf_merge([("vector store", vectors), ("BM25", keyword(query))]))

            out[f"klea BM25, stemmed, {label} tokens"] = lambda q, k=keyword: file_names(k(q))
            out[f"klea hybrid (RRF), stemmed BM25, {label} tokens"] = hybrid
        return out

    def vote_rankers(self, folder: Path) -> dict[str, Ranker]:
        """``--votes``: the vector store, the stemmed BM25 pickle and an ``fts5:`` index of
        the same documents (stemmed, multiscript: a new build's), fused with one vote per
        store and with one vote per leg; beside them the stemmed hybrid of one store."""
        from klea_utils.stores.retrieval.fts5_index import write_fts5_chunks

        index = folder / "fts5.sqlite"
        write_fts5_chunks(
            index, [(str(d.id), d) for d in self.docs], stemming=True, multiscript=True
        )
        info = BM25StoreInfo(name="fts5", path=f"fts5:{index}", default_k=DEPTH, k_max=10 * DEPTH)
        config = RetrieverConfig(domains={DOMAIN: PerDomainConfig(bm25_stores=[info])})
        fts5 = BM25RetrieverManager(config, logging.getLogger("quality.klea"))
        k_values = {DOMAIN: {DOMAIN: DEPTH, "bm25": DEPTH, "fts5": DEPTH}}
        by_id = {str(d.id): d for d in self.docs}

        def lexical(query: str) -> list[tuple[Document, float]]:
            # The index returns its normalized text; the documents as the other stores
            # hold them keep the fusion's identity (file name and text) one per document.
            return [
                (by_id[str(d.id)], s) for d, s in fts5.retrieve(DOMAIN, query, k_values=k_values)
            ]

        asked: dict[str, list[tuple[str, list[tuple[Document, float]]]]] = {}

        def lists(query: str) -> list[tuple[str, list[tuple[Document, float]]]]:
            # Both counts fuse the same three lists: each store is asked once per query.
            if query not in asked:
                asked[query] = [
                    ("vector store", self.vectors.retrieve(DOMAIN, query, k_values=k_values)),
                    (
                        "BM25: bm25.pkl",
                        self.bm25_stemmed.retrieve(DOMAIN, query, k_values=k_values),
                    ),
                    ("BM25: fts5", lexical(query)),
                ]
            return asked[query]

        def per_store(query: str) -> list[str]:
            return file_names(rrf_merge(lists(query)))

        def per_leg(query: str) -> list[str]:
            vector, *lexical = lists(query)
            return file_names(rrf_merge_legs([("vector store", [vector]), ("BM25", lexical)]))

        return {
            "klea hybrid (RRF), stemmed BM25": lambda q: file_names(self.fused(q, stemmed=True)),
            "klea fts5 (stemmed, multiscript)": lambda q: file_names(lexical(q)),
            "klea hybrid, vector + BM25 pickle + fts5, a vote per store": per_store,
            "klea hybrid, vector + BM25 pickle + fts5, a vote per leg": per_leg,
        }

    def focused(self, query: str) -> list[str]:
        """The stemmed hybrid re-ordered by passage focus as ``KleaPipeline`` does by default
        (inside each file; here each document is one passage, so the order is kept)."""
        params = replace(DEFAULT_FOCUS, pool=DEPTH)
        return file_names(focus_rerank(query, self.fused(query, DEPTH, True), params))


# -- sci-etl-search ---------------------------------------------------------------------


class SciPipeline:
    """``AsyncHybridSearcher`` over an FTS5 text index and an SQLite vector memory."""

    def __init__(
        self,
        collection: Collection,
        cache: VectorCache,
        vectors: np.ndarray,
        folder: Path,
        klea_store: Any = None,
        multiscript: bool = False,
    ) -> None:
        self.collection, self.cache, self.vectors, self.folder = collection, cache, vectors, folder
        self.klea_store = klea_store
        self.loop = asyncio.new_event_loop()
        self.embedder = CachedEmbedder(cache)
        self.stores = {
            (fielded, stemmed): AsyncSqliteFts5Store(
                folder / f"text-{int(fielded)}{int(stemmed)}.sqlite", stemming=stemmed
            )
            for fielded in (False, True)
            for stemmed in (False, True)
        }
        self.multiscript_stores = {
            stemmed: AsyncSqliteFts5Store(
                folder / f"text-multiscript-{int(stemmed)}.sqlite",
                stemming=stemmed,
                multiscript=True,
            )
            for stemmed in ((False, True) if multiscript else ())
        }
        self.memory = AsyncSqliteEmbeddingStore(folder / "memory.sqlite")
        self.loop.run_until_complete(self._index())
        self.finder = AsyncSimilarArticleFinder(self.embedder, self.memory)

    async def _index(self) -> None:
        c = self.collection
        rows = list(zip(c.ids, c.titles, c.texts, strict=True))
        whole = [SearchDocument(i, body=text) for i, _, text in rows]
        fielded = [
            SearchDocument(i, title=title, abstract=text[len(title) :].strip())
            for i, title, text in rows
        ]
        for (in_fields, _), store in self.stores.items():
            await store.index(fielded if in_fields else whole)
        for store in self.multiscript_stores.values():
            await store.index(whole)
        await self.memory.add(
            [
                EmbeddingChunk(i, 0, text, vector, {"title": title})
                for (i, title, text), vector in zip(rows, self.vectors, strict=True)
            ]
        )

    def searcher(
        self,
        *,
        fielded: bool = False,
        stemmed: bool = False,
        pool: int = DEPTH,
        strategy: FusionStrategy = reciprocal_rank_fusion,
    ) -> AsyncHybridSearcher:
        return AsyncHybridSearcher(
            self.stores[fielded, stemmed],
            self.finder,
            params=HybridParams(candidate_pool=pool),
            strategy=strategy,
        )

    def candidates(self) -> dict[str, tuple[Ranker, Callable[[], Ranker]]]:
        """Hybrid configurations to choose from on training queries: the library's options.

        Each maps to a ranker for the train queries and a factory of the searcher's own
        ranker, for the test queries. The train ranker fuses the two legs as the searcher
        does (the strategy over the lexical and the semantic list, cut to the pool), but
        fetches each leg once at the largest pool and skips the snippets of the fused
        hits, which cost most of a semantic search's time and do not change the ranking.
        """
        legs: dict[tuple[str, bool, bool], list[list[tuple[str, float]]]] = {}

        async def fetch(query: str, fielded: bool, stemmed: bool) -> list[list[tuple[str, float]]]:
            node, text = parse_semantic_query(or_query(query))
            store = self.stores[fielded, stemmed]
            lexical = await store.search(node, limit=3 * DEPTH)
            semantic = await self.finder.find_similar_articles(text, 3 * DEPTH)
            return [
                [(hit.record_id, hit.score) for hit in lexical],
                [(hit.record_id, hit.score) for hit in semantic],
            ]

        def fused(
            query: str, fielded: bool, stemmed: bool, strategy: FusionStrategy, pool: int
        ) -> list[str]:
            key = (query, fielded, stemmed)
            if key not in legs:
                legs[key] = self.loop.run_until_complete(fetch(*key))
            lists = [ranked[:pool] for ranked in legs[key]]
            return [record_id for record_id, _ in strategy(lists, FusionParams())[:DEPTH]]

        out: dict[str, tuple[Ranker, Callable[[], Ranker]]] = {}
        for stemmed in (False, True):
            for fielded in (False, True):
                for strategy in (reciprocal_rank_fusion, normalized_score_fusion):
                    for pool in (DEPTH, 3 * DEPTH):
                        fields = "title/abstract fields" if fielded else "one field"
                        fusion = "RRF" if strategy is reciprocal_rank_fusion else "normalized"
                        stems = ", stemmed" if stemmed else ""
                        config = {
                            "fielded": fielded,
                            "stemmed": stemmed,
                            "strategy": strategy,
                            "pool": pool,
                        }
                        out[f"sci-etl hybrid, {fields}{stems}, {fusion}, pool {pool}"] = (
                            lambda q, config=config: fused(q, **config),
                            lambda config=config: self.ranker(self.searcher(**config), "hybrid"),
                        )
        return out

    def ranker(self, searcher: AsyncHybridSearcher, mode: Any) -> Ranker:
        def rank(query: str) -> list[str]:
            outcome = self.loop.run_until_complete(
                searcher.search(or_query(query), top_k=DEPTH, mode=mode)
            )
            return [hit.record_id for hit in outcome.hits]

        return rank

    def rankers(self) -> dict[str, Ranker]:
        plain, fielded = self.searcher(), self.searcher(fielded=True)
        stemmed = self.searcher(stemmed=True)
        over_klea: dict[str, Ranker] = {}
        if self.klea_store is not None:
            memory = KleaVectorMemory([self.klea_store], label="the klea Chroma collection")
            searcher = AsyncHybridSearcher(
                self.stores[False, False], AsyncSimilarArticleFinder(self.embedder, memory)
            )
            over_klea["sci-etl hybrid over the klea Chroma collection"] = self.ranker(
                searcher, "hybrid"
            )
        return {
            "sci-etl lexical (FTS5)": self.ranker(plain, "lexical"),
            "sci-etl semantic (MiniLM)": self.ranker(plain, "semantic"),
            "sci-etl hybrid (RRF)": self.ranker(plain, "hybrid"),
            **over_klea,
            "sci-etl lexical, title/abstract fields": self.ranker(fielded, "lexical"),
            "sci-etl lexical, stemmed": self.ranker(stemmed, "lexical"),
            "sci-etl hybrid (RRF), stemmed": self.ranker(stemmed, "hybrid"),
        }

    def multiscript_rankers(self) -> dict[str, Ranker]:
        """Issue 37's check on English: FTS5 indexes built with ``multiscript=True``, beside
        the unicode61 rows of :meth:`rankers` (empty unless built with ``multiscript``)."""
        out: dict[str, Ranker] = {}
        for stemmed, store in self.multiscript_stores.items():
            searcher = AsyncHybridSearcher(
                store, self.finder, params=HybridParams(candidate_pool=DEPTH)
            )
            stems = ", stemmed" if stemmed else ""
            out[f"sci-etl lexical{stems}, multiscript"] = self.ranker(searcher, "lexical")
            out[f"sci-etl hybrid (RRF){stems}, multiscript"] = self.ranker(searcher, "hybrid")
        return out

    def close(self) -> None:
        for store in (*self.stores.values(), *self.multiscript_stores.values(), self.memory):
            self.loop.run_until_complete(store.aclose())
        self.loop.close()


# -- the report -------------------------------------------------------------------------

Results = dict[str, dict[str, tuple[float, float]]]  # system -> collection -> (nDCG, R)


Tuning = list[tuple[str, float, float]]  # candidate, train nDCG@10, train R@100


def timed(collection: Collection, system: str, rank: Ranker) -> tuple[float, float]:
    start = time.perf_counter()
    scores = evaluate(collection, rank)
    rate = len(collection.queries) / (time.perf_counter() - start)
    log(f"  {system:<52} nDCG@10 {scores[0]:.4f}  R@100 {scores[1]:.4f}  ({rate:.0f} q/s)")
    return scores


def choose(
    test: Collection, pipelines: Sequence[Any], cache: VectorCache, results: Results
) -> Tuning:
    """Pick each pipeline's best hybrid configuration on SciFact's train queries; test it."""
    train = load(test.name, split="train")
    encode(cache, train)
    log(f"{test.name} train split: {len(train.queries)} judged queries, to choose a configuration")
    tuning: Tuning = []
    for pipeline in pipelines:
        candidates = pipeline.candidates()
        scored = {name: timed(train, name, rank) for name, (rank, _) in candidates.items()}
        tuning += [(name, *scores) for name, scores in scored.items()]
        best = max(scored, key=lambda name: scored[name][0])
        system = f"{best} (chosen on train)"
        results[system] = {test.name: timed(test, system, candidates[best][1]())}
    return tuning


def token_differences(collection: Collection) -> str:
    """How many documents and queries the multiscript tokenizers cut otherwise than the
    unicode61 ones (klea's stemmed BM25 tokens; sci-etl's FTS5 tokens): none means equal
    indexes, so equal rankings, whatever the figures below."""
    unicode61_stems, unicode61 = PorterTokenizer(), Unicode61Tokenizer()
    multiscript = MultiscriptTokenizer()
    texts = [*collection.texts, *collection.queries.values()]
    started = time.process_time()
    bm25 = sum(
        stemmed_preprocessing_func(t) != unicode61_stems.words(normalize_text(t)) for t in texts
    )
    fts5 = sum(multiscript.words(t) != unicode61.words(t) for t in texts)
    return (
        f"{len(texts)} texts; BM25 stemmed tokens differ in {bm25}, FTS5 tokens in {fts5} "
        f"({time.process_time() - started:.1f} s CPU)"
    )


MULTISCRIPT_BASELINES = (
    "klea BM25, stemmed",
    "klea hybrid (RRF), stemmed BM25",
    "sci-etl lexical (FTS5)",
    "sci-etl hybrid (RRF)",
    "sci-etl lexical, stemmed",
    "sci-etl hybrid (RRF), stemmed",
)
"""The rows ``--multiscript`` measures beside the multiscript ones: the defaults as shipped."""


def first_queries(collection: Collection, limit: int) -> Collection:
    if not limit:
        return collection
    queries = dict(list(collection.queries.items())[:limit])
    return Collection(**{**collection.__dict__, "queries": queries})


def no_vectors(collection: Collection) -> np.ndarray:
    """One placeholder unit vector per document, for a :class:`SciPipeline` whose semantic
    side is never asked."""
    vectors = np.zeros((len(collection.ids), 384), dtype=np.float32)
    vectors[:, 0] = 1.0
    return vectors


def paired_difference(collection: Collection, before: Ranker, after: Ranker) -> str:
    """Per-query nDCG@10 of ``after`` less ``before``: the mean, how many queries got
    better, worse or stayed, and a 95% bootstrap interval of the mean (5,000 resamples,
    seed 37), so a difference can be told from the noise of a few queries."""
    import random

    diffs = [
        ndcg10(after(text), collection.qrels[qid]) - ndcg10(before(text), collection.qrels[qid])
        for qid, text in collection.queries.items()
    ]
    n = len(diffs)
    rng = random.Random(37)
    means = sorted(sum(rng.choice(diffs) for _ in range(n)) / n for _ in range(5000))
    better = sum(d > 1e-12 for d in diffs)
    worse = sum(d < -1e-12 for d in diffs)
    return (
        f"mean {sum(diffs) / n:+.4f} over {n} queries (better {better}, worse {worse}, "
        f"equal {n - better - worse}), 95% bootstrap [{means[125]:+.4f}, {means[4874]:+.4f}]"
    )


def memo(rank: Ranker) -> Ranker:
    """``rank`` answering each query once (the paired comparison asks again)."""
    seen: dict[str, list[str]] = {}

    def ranked(query: str) -> list[str]:
        if query not in seen:
            seen[query] = rank(query)
        return seen[query]

    return ranked


def lexical_multiscript_rows(collection: Collection, sci: SciPipeline) -> dict[str, Ranker]:
    """``--multiscript --lexical-only``: the lexical rows of the check, nothing encoded:
    klea's stemmed BM25 and sci-etl's FTS5 lexical search (``sci`` built with
    ``multiscript=True``), plain and stemmed, each with the multiscript and the unicode61
    tokens."""
    out: dict[str, Ranker] = {}
    for label, keyword in stemmed_bm25_by_tokens(as_documents(collection)).items():
        out[f"klea BM25, stemmed, {label} tokens"] = lambda q, k=keyword: file_names(k(q))
    sci_rows = {**sci.rankers(), **sci.multiscript_rankers()}
    for system, rank in sci_rows.items():
        if "lexical" in system and "fields" not in system:
            out[system] = rank
    return out


def run(
    names: Sequence[str],
    cache: VectorCache,
    limit: int,
    tune: bool,
    klea_only: bool = False,
    systems: Sequence[str] = (),
    multiscript: bool = False,
    lexical_only: bool = False,
    votes: bool = False,
) -> tuple[Results, Tuning]:
    results: Results = {}
    tuning: Tuning = []
    for name in names:
        collection = load(name)
        if multiscript:
            log(f"{name}: {token_differences(collection)}")
        if lexical_only:
            collection = first_queries(collection, limit)
            with tempfile.TemporaryDirectory() as tmp:
                sci = SciPipeline(collection, cache, no_vectors(collection), Path(tmp), None, True)
                try:
                    for system, rank in lexical_multiscript_rows(collection, sci).items():
                        results.setdefault(system, {})[name] = timed(collection, system, rank)
                finally:
                    sci.close()
            continue
        vectors = encode(cache, collection)  # all queries, so the cache key stays the same
        if limit:
            queries = dict(list(collection.queries.items())[:limit])
            collection = Collection(**{**collection.__dict__, "queries": queries})
        log(f"{name}: {len(collection.ids)} documents, {len(collection.queries)} judged queries")
        with tempfile.TemporaryDirectory() as tmp:
            klea = KleaPipeline(collection, cache, Path(tmp))
            if votes:
                rows = {system: memo(rank) for system, rank in klea.vote_rankers(Path(tmp)).items()}
                for system, rank in rows.items():
                    results.setdefault(system, {})[name] = timed(collection, system, rank)
                per_store, per_leg = (rows[s] for s in list(rows)[-2:])
                paired = paired_difference(collection, per_store, per_leg)
                log(f"  a vote per leg against per store, nDCG@10: {paired}")
                continue
            if klea_only:
                for system, rank in klea.rankers().items():
                    results.setdefault(system, {})[name] = timed(collection, system, rank)
                continue
            sci = SciPipeline(collection, cache, vectors, Path(tmp), klea.store, multiscript)
            try:
                rankers = {**klea.rankers(), **sci.rankers()}
                if multiscript:
                    rankers = {
                        **{s: rankers[s] for s in MULTISCRIPT_BASELINES},
                        **klea.multiscript_rankers(),
                        **sci.multiscript_rankers(),
                    }
                for system, rank in rankers.items():
                    if systems and system not in systems:
                        continue
                    results.setdefault(system, {})[name] = timed(collection, system, rank)
                if tune and name == "scifact":
                    tuning = choose(collection, [klea, sci], cache, results)
            finally:
                sci.close()
            misses = klea.embeddings.misses + sci.embedder.misses
            if misses:
                log(f"  ({misses} texts were not in the vector cache and were embedded on the fly)")
    return results, tuning


def table(results: Results, names: Sequence[str]) -> str:
    shown = [DISPLAY.get(n, n) for n in names]
    head = "| system | " + " | ".join(f"{n} nDCG@10 | {n} R@100" for n in shown) + " |"
    rule = "|---|" + "---:|---:|" * len(names)
    lines = [head, rule]
    for system, by_name in results.items():
        cells = [
            f"{by_name[n][0]:.3f} | {by_name[n][1]:.3f}" if n in by_name else "- | -" for n in names
        ]
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def verdicts(results: Results) -> list[str]:
    out = []
    chosen = [system for system in results if system.endswith("(chosen on train)")]
    stemmed = ("klea hybrid (RRF), stemmed BM25", "sci-etl hybrid (RRF), stemmed")
    for system in ("klea hybrid (RRF)", "sci-etl hybrid (RRF)", *stemmed, *chosen):
        score = results.get(system, {}).get("scifact")
        if score is None:
            continue
        met = "met" if score[0] >= TARGET else f"missed by {TARGET - score[0]:.3f}"
        out.append(f"- {system}: SciFact nDCG@10 {score[0]:.3f}, target {TARGET:.2f} {met}.")
    return out


def tuning_section(tuning: Tuning) -> list[str]:
    if not tuning:
        return []
    return [
        "## Choosing a configuration on training queries",
        "",
        "The hybrid configurations each pipeline offers were compared on SciFact's",
        f"*train* split ({TRAIN_QUERIES} judged claims, disjoint from the 300 test claims);",
        "the best of each pipeline was then run once on the test claims (the *chosen on",
        "train* rows above). No setting was chosen by looking at test queries.",
        "",
        "| configuration | train nDCG@10 | train R@100 |",
        "|---|---:|---:|",
        *(f"| {name} | {ndcg:.3f} | {recall:.3f} |" for name, ndcg, recall in tuning),
        "",
    ]


def report(results: Results, names: Sequence[str], notes: Sequence[str], tuning: Tuning) -> str:
    return (
        "\n".join(
            [
                "# Retrieval quality",
                "",
                "Generated by `scripts/bench/quality.py`; regenerate with",
                "`uv run --frozen python scripts/bench/quality.py`. The first run encodes every",
                "collection (about ten minutes on 2 CPU cores) and caches the vectors under",
                "`scripts/bench/.cache/`; a run then takes several minutes per collection, most",
                "of it in sci-etl's semantic and hybrid searches (see the notes).",
                "`--collections NAME ...` re-runs some collections and keeps the other columns",
                "from the last run.",
                "",
                "Collections from `../shared/data/` (BEIR layout), judged queries only: SciFact",
                "(5,183 abstracts, 300 test claims), Cranfield (1,400 abstracts, 225 queries),",
                "CISI (1,460 abstracts, 76 judged queries). Binary relevance; nDCG@10 and",
                f"recall@{DEPTH} averaged over queries.",
                "",
                "## Set-up",
                "",
                '- Each document is one text, `title + " " + text`, and one chunk: these are',
                "  abstracts, so each is embedded whole (all-MiniLM-L6-v2 reads the first 256",
                "  word pieces; a longer abstract's tail is not embedded).",
                "- **klea**: a Chroma collection searched through `VSRetriever` with the packaged",
                "  MiniLM (`load_embeddings()`), a rank_bm25 corpus searched through",
                f"  `BM25RetrieverManager`; each store returns {DEPTH} chunks, fused by",
                "  `rrf_merge` (k=60), optionally re-ranked by `rerank_by_recency`. The",
                "  *stemmed* rows set `BM25StoreInfo(stemming=True)`: words are reduced to",
                "  their Porter stems, as FTS5's `porter` tokenizer does.",
                "- **sci-etl-search**: `AsyncHybridSearcher` over `AsyncSqliteFts5Store` and",
                f"  `AsyncSqliteEmbeddingStore`, candidate pool {DEPTH}, reciprocal rank fusion",
                "  (k=60). The lexical query is the OR of the query's words, each quoted; the",
                "  semantic leg embeds those words. By default the text is indexed as one",
                "  field; the *title/abstract fields* rows index the title and the text apart",
                "  with the default `BM25Weights` (title 2, abstract 1). The *stemmed* rows",
                "  use `AsyncSqliteFts5Store(stemming=True)` (FTS5's `porter` tokenizer).",
                "  *sci-etl hybrid over the klea Chroma collection* reads klea's Chroma",
                "  collection through `KleaVectorMemory` as its vector memory (no second",
                "  store of the vectors), as `klea-serve` does with the stores `build` writes.",
                "- Vectors are encoded once with sentence-transformers and cached by a hash of",
                "  the texts; both pipelines use the same document vectors.",
                "",
                "## Results",
                "",
                table(results, names),
                "",
                f"Target: hybrid SciFact nDCG@10 >= {TARGET:.2f} in both pipelines.",
                "",
                *verdicts(results),
                "",
                *tuning_section(tuning),
                *notes,
            ]
        ).rstrip()
        + "\n"
    )


NOTES = [
    "## Notes",
    "",
    "- The collections carry no publication year, so `rerank_by_recency` gives every",
    "  document the same time score and keeps the fused order: its row equals the plain",
    "  RRF row by construction, not by chance.",
    "- Chroma searches an approximate (HNSW) index, the sci-etl memory an exact scan,",
    "  so the two semantic legs can differ slightly on the same vectors.",
    "- For orientation, `../shared/data/README.md` lists published and measured",
    "  SciFact figures: BM25 0.665-0.679, MiniLM dense 0.645, RRF of FTS5 BM25 and",
    "  MiniLM 0.688, RRF of a *stemmed* BM25 and MiniLM 0.717. Both pipelines stem",
    "  only when asked (`stemming=True`); stemming was chosen as an option, not as",
    "  the default, so a store keeps matching exactly the words it was given unless",
    "  its owner opts in.",
    "- A large part of a semantic or hybrid `AsyncHybridSearcher.search` goes into the",
    "  snippets of hits that only the semantic leg found (`passage_snippet`), not into",
    "  ranking. The train-split comparison therefore fuses the two legs itself, with the",
    "  same strategy and cut as the searcher and without snippets; on sample queries it",
    "  returns the searcher's ranking exactly. The test rows all go through the searcher.",
]


def merged(results: Results, tuning: Tuning) -> tuple[Results, Tuning]:
    """Add this run's figures to the last full-query run's, kept in the cache folder.

    A run of some collections (``--collections scifact``) then updates their columns of
    the report and keeps the others.
    """
    path = CACHE / "quality-results.json"
    saved: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    old: Results = {
        system: {name: (pair[0], pair[1]) for name, pair in by_name.items()}
        for system, by_name in saved.get("results", {}).items()
    }
    for system, by_name in results.items():
        old.setdefault(system, {}).update(by_name)
    new_tuning: Tuning = tuning or [(n, d, r) for n, d, r in saved.get("tuning", [])]
    CACHE.mkdir(exist_ok=True)
    path.write_text(json.dumps({"results": old, "tuning": new_tuning}, indent=1))
    order = {system: n for n, system in enumerate(results)}
    ranked = dict(sorted(old.items(), key=lambda item: order.get(item[0], len(order))))
    return ranked, new_tuning


KEEP_MARKER = "<!-- Sections below are written by hand; quality.py keeps them. -->"


def kept_sections(path: Path) -> str:
    """The hand-written sections after :data:`KEEP_MARKER` in ``path`` (marker included)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    at = text.find(KEEP_MARKER)
    return "" if at < 0 else "\n" + text[at:]


def main(args: argparse.Namespace) -> None:
    logging.basicConfig(level=logging.WARNING)
    cache = VectorCache(args.documents, args.embedder)
    if args.embedder != "minilm":  # the rows keep their names: "MiniLM" reads as this model
        log(f"documents and queries embedded by {USE_SPEC}")
    results, tuning = run(
        args.collections,
        cache,
        args.queries,
        args.tune and not args.multiscript,
        args.klea_only,
        args.systems,
        args.multiscript,
        args.lexical_only,
        args.votes,
    )
    print(table(results, args.collections))
    print("\n".join(verdicts(results)))
    partial = args.queries or args.klea_only or args.systems or args.multiscript or args.votes
    if args.write and not partial and args.documents == "torch" and args.embedder == "minilm":
        results, tuning = merged(results, tuning)
        names = [name for name in DATASETS if any(name in r for r in results.values())]
        REPORT.write_text(
            report(results, names, NOTES, tuning) + kept_sections(REPORT), encoding="utf-8"
        )
        log(f"wrote {REPORT.relative_to(ROOT)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", nargs="+", choices=DATASETS, default=list(DATASETS))
    parser.add_argument("--queries", type=int, default=0, help="only the first N queries")
    parser.add_argument(
        "--no-tune",
        dest="tune",
        action="store_false",
        help="skip choosing hybrid configurations on SciFact's train split",
    )
    parser.add_argument(
        "--klea-only",
        action="store_true",
        help="only the klea rows, no tuning; the report is not written",
    )
    parser.add_argument(
        "--systems",
        nargs="+",
        default=[],
        metavar="SYSTEM",
        help="only these rows (as the table names them; with --no-tune), e.g. "
        "'sci-etl hybrid (RRF)'; the report is not written",
    )
    parser.add_argument(
        "--multiscript",
        action="store_true",
        help="issue 37's check: the lexical legs with MultiscriptTokenizer and with unicode61 "
        "(BM25 stemmed, FTS5 plain and stemmed), alone and hybrid; no tuning, no report",
    )
    parser.add_argument(
        "--votes",
        action="store_true",
        help="issue 37's check: the hybrid of the vector store, the BM25 pickle and an fts5 "
        "index, one vote per store against one per leg; no tuning, no report",
    )
    parser.add_argument(
        "--documents",
        choices=("torch", "onnx-fp32", "onnx-int8"),
        default="torch",
        help="embed the documents with this variant (issue 40; queries keep torch); "
        "the report is not written unless torch",
    )
    parser.add_argument(
        "--lexical-only",
        action="store_true",
        help="with --multiscript: only the lexical rows, nothing encoded (no vector cache "
        "needed); the report is not written",
    )
    parser.add_argument(
        "--no-write",
        dest="write",
        action="store_false",
        help=f"do not write {REPORT.name} (never written with --queries)",
    )
    parser.add_argument(
        "--embedder",
        choices=("minilm", "use"),
        default="minilm",
        help="documents and queries embedded by the packaged MiniLM or by use:multilingual-v3 "
        "(issue 37; needs the multilingual extra and --klea-only; the report is not written)",
    )
    arguments = parser.parse_args()
    if arguments.embedder != "minilm" and not arguments.klea_only:
        parser.error("--embedder use goes with --klea-only (sci-etl's rows embed with MiniLM)")
    if arguments.lexical_only and not arguments.multiscript:
        parser.error("--lexical-only goes with --multiscript")
    main(arguments)
