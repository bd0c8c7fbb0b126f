"""One corpus through ``klea-stores-create build``, read back by every lexical reader.

A small corpus (Markdown, HTML, DOCX, a text PDF), each file with its own title, is
ingested once by the real command into Chroma, the rank_bm25 pickle and the FTS5 index,
without stemming (``--no-fts5-stemming``, and the pickle read with ``stemming=False``;
both stem by default) so that the unicode61 readers can be compared first.
Then, for an exact-title query of each file:

- klea's ``BM25RetrieverManager`` over the pickle and over ``fts5:<index>`` (free text, an
  OR of the words) and sci-etl's ``AsyncSqliteFts5Store`` on the same file and an
  ``InMemoryTextSearchStore`` loaded from it (the OR of the words, parsed) match the same
  chunks; the top hit is a chunk of the title's file in all four;
- on the AND of the title's words, the two sci-etl stores match exactly that file's
  chunks, with equal scores, and they are the best-ranked chunks of both klea backends.

The FTS5 index passes ``integrity_check``, and ``Unicode61Tokenizer`` reproduces its
vocabulary: the tokens of every stored field equal the terms (and per-column counts) that
an ``fts5vocab`` table reads from a copy of the index. Switched to stemming with
``sci-etl-search maintain rebuild-index --stemming``, the copy holds exactly the
``PorterTokenizer`` stems, and klea's ``fts5:`` store on it (following the file) matches
the same chunks as the pickle with ``BM25StoreInfo(stemming=True)``.

Titles hold no stopword or question word, so klea's question query (which drops them)
and the parsed OR of the title's words see the same words.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ingest_corpus import sample_paragraphs, write_docx, write_html, write_markdown, write_text_pdf
from klea_utils.stores.config import BM25StoreInfo, PerDomainConfig, RetrieverConfig
from klea_utils.stores.retrieval.bm25 import FTS5_SCHEME, BM25RetrieverManager, read_corpus
from sci_etl_core.search import (
    AsyncSqliteFts5Store,
    InMemoryTextSearchStore,
    PorterTokenizer,
    SearchDocument,
    Unicode61Tokenizer,
    parse_query,
)

pytestmark = pytest.mark.slow

TITLES = {
    "dendrites.md": "Dendritic Integration Within Pyramidal Cells",
    "oscillations.html": "Gamma Oscillations Among Fast Interneurons",
    "homeostasis.docx": "Homeostatic Synaptic Scaling During Sleep",
    "astrocytes.pdf": "Astrocyte Calcium Waves Revisited",
}
WRITERS = {".md": write_markdown, ".html": write_html, ".docx": write_docx, ".pdf": write_text_pdf}
COLLECTION = "papers"
DEPTH = 100  # more than the corpus holds: klea returns every chunk sharing a query word


@dataclass(frozen=True)
class Built:
    """Where the build wrote its stores, and every stored chunk as the FTS5 index has it."""

    root: Path
    chroma: Path
    bm25: Path
    fts5: Path
    documents: dict[str, SearchDocument]


def _stores_create() -> str:
    found = shutil.which("klea-stores-create") or Path(sys.executable).with_name(
        "klea-stores-create"
    )
    return str(found)


async def _read_back(path: Path) -> dict[str, SearchDocument]:
    store = AsyncSqliteFts5Store(path)
    try:
        return await store.get_documents(await store.filter_ids())
    finally:
        await store.aclose()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    root = tmp_path_factory.mktemp("parity-ingest")
    source = root / "papers"
    for seed, (name, title) in enumerate(TITLES.items(), start=1):
        WRITERS[Path(name).suffix](source / name, title, sample_paragraphs(3, seed=seed))
    chroma, bm25, fts5 = root / "chroma", root / "papers.bm25", root / "papers.fts5.sqlite"
    env = {**os.environ, "KLEA_DOI_LOOKUP": "0", "PYTHONWARNINGS": "ignore", "COLUMNS": "200"}
    result = subprocess.run(
        [
            _stores_create(),
            "build",
            str(source),
            "--store",
            f"chroma:{chroma}",
            "--collection",
            COLLECTION,
            "--bm25-store",
            str(bm25),
            "--fts5-store",
            str(fts5),
            "--no-fts5-stemming",  # unicode61 first; the stemming switch is tested below
            "--no-ocr",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert f"{len(TITLES)} file(s) added" in result.stdout
    return Built(root, chroma, bm25, fts5, asyncio.run(_read_back(fts5)))


@pytest.fixture(scope="module")
def manager(built: Built) -> Iterator[BM25RetrieverManager]:
    stores = [
        BM25StoreInfo(
            name="pickle", path=str(built.bm25), stemming=False, default_k=DEPTH, k_max=DEPTH
        ),
        BM25StoreInfo(
            name="fts5", path=FTS5_SCHEME + str(built.fts5), default_k=DEPTH, k_max=DEPTH
        ),
    ]
    config = RetrieverConfig(domains={COLLECTION: PerDomainConfig(bm25_stores=stores)})
    retriever = BM25RetrieverManager(config, logging.getLogger("parity-ingest"))
    yield retriever
    for store in stores:
        if store.loaded_object is not None and hasattr(store.loaded_object, "close"):
            store.loaded_object.close()


def _file_of(record_id: str) -> str:
    return record_id.rsplit(":", 1)[0]


def test_every_store_holds_the_same_chunks(built: Built) -> None:
    import chromadb

    pickled = {str(d.id): d.page_content for d in read_corpus(built.bm25)}
    client = chromadb.PersistentClient(path=str(built.chroma))
    chroma_ids = set(client.get_collection(COLLECTION).get(include=[])["ids"])
    assert {_file_of(i) for i in pickled} == set(TITLES)
    assert set(built.documents) == set(pickled) == chroma_ids
    for record_id, document in built.documents.items():
        assert document.body == pickled[record_id]
        assert document.metadata["file_name"] == _file_of(record_id)


@pytest.mark.parametrize("file_name", sorted(TITLES))
def test_exact_title_query_matches_alike(
    built: Built, manager: BM25RetrieverManager, file_name: str
) -> None:
    title = TITLES[file_name]
    words = title.split()
    per_store = dict(manager.retrieve_per_store(COLLECTION, title))
    klea = {
        name: [str(doc.id) for doc, _ in per_store[f"BM25: {name}"]] for name in ("pickle", "fts5")
    }
    any_words = parse_query(" OR ".join(words))
    all_words = parse_query(" AND ".join(words))

    async def sci() -> dict[str, Any]:
        fts5 = AsyncSqliteFts5Store(built.fts5)
        memory = InMemoryTextSearchStore()
        try:
            loaded = await fts5.get_documents(await fts5.filter_ids())
            await memory.index(list(loaded.values()))
            return {
                "fts5 or": await fts5.filter_ids(any_words),
                "memory or": await memory.filter_ids(any_words),
                "fts5 and": await fts5.filter_ids(all_words),
                "memory and": await memory.filter_ids(all_words),
                "fts5 hits": await fts5.search(all_words, limit=DEPTH),
                "memory hits": await memory.search(all_words, limit=DEPTH),
                "fts5 or hits": await fts5.search(any_words, limit=DEPTH),
            }
        finally:
            await fts5.aclose()
            await memory.aclose()

    found = asyncio.run(sci())
    own_chunks = {i for i in built.documents if _file_of(i) == file_name}

    # OR of the title's words: the same chunks in all four readers.
    assert found["fts5 or"] == found["memory or"] == set(klea["pickle"]) == set(klea["fts5"])
    assert own_chunks <= found["fts5 or"]
    top_files = {
        name: _file_of(ids[0])
        for name, ids in (
            ("pickle", klea["pickle"]),
            ("klea fts5", klea["fts5"]),
            ("sci fts5", [h.record_id for h in found["fts5 or hits"]]),
        )
    }
    assert top_files == dict.fromkeys(top_files, file_name)

    # AND of the title's words: exactly this file's chunks, ranked first by klea.
    assert found["fts5 and"] == found["memory and"] == own_chunks
    and_files = {
        name: {_file_of(i) for i in ids}
        for name, ids in (
            ("sci fts5", found["fts5 and"]),
            ("sci memory", found["memory and"]),
            ("pickle", klea["pickle"][: len(own_chunks)]),
            ("klea fts5", klea["fts5"][: len(own_chunks)]),
        )
    }
    assert and_files == {name: {file_name} for name in and_files}
    fts5_scores = {h.record_id: h.score for h in found["fts5 hits"]}
    memory_scores = {h.record_id: h.score for h in found["memory hits"]}
    assert fts5_scores == pytest.approx(memory_scores, rel=1e-9)
    assert _file_of(found["fts5 hits"][0].record_id) == file_name
    assert _file_of(found["memory hits"][0].record_id) == file_name


def test_fts5_index_passes_integrity_check(built: Built) -> None:
    async def check() -> bool:
        store = AsyncSqliteFts5Store(built.fts5)
        try:
            return await store.integrity_check()
        finally:
            await store.aclose()

    assert asyncio.run(check()) is True


def _vocabulary(path: Path) -> dict[tuple[str, str], int]:
    """Every (term, column) of the FTS5 index at ``path`` with its count, via ``fts5vocab``."""
    connection = sqlite3.connect(path)
    try:
        connection.execute('CREATE VIRTUAL TABLE "vocab" USING fts5vocab("documents_fts", "col")')
        rows = connection.execute('SELECT "term", "col", "cnt" FROM "vocab"').fetchall()
    finally:
        connection.close()
    return {(term, col): count for term, col, count in rows}


def _tokenized(documents: Iterable[SearchDocument], tokenizer: Any) -> dict[tuple[str, str], int]:
    """The same counts, from ``tokenizer`` over every stored field."""
    counts: Counter[tuple[str, str]] = Counter()
    for document in documents:
        for col in ("title", "abstract", "body"):
            for word in tokenizer.words(getattr(document, col)):
                counts[word, col] += 1
    return dict(counts)


def test_tokenizer_reproduces_the_fts5_vocabulary(built: Built, tmp_path: Path) -> None:
    copy = tmp_path / "copy.sqlite"
    shutil.copyfile(built.fts5, copy)
    from_fts5 = _vocabulary(copy)
    assert from_fts5, "the FTS5 index holds no terms"
    assert from_fts5 == _tokenized(built.documents.values(), Unicode61Tokenizer())


def test_an_ingested_index_switched_to_stemming_agrees_with_stemmed_bm25(
    built: Built, tmp_path: Path
) -> None:
    copy = tmp_path / "stemmed.sqlite"
    shutil.copyfile(built.fts5, copy)
    command = shutil.which("sci-etl-search") or Path(sys.executable).with_name("sci-etl-search")
    result = subprocess.run(
        [str(command), "maintain", "rebuild-index", "--db", str(copy), "--stemming"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "with stemming" in result.stdout

    assert _vocabulary(copy) == _tokenized(built.documents.values(), PorterTokenizer())

    stores = [
        BM25StoreInfo(
            name="pickle", path=str(built.bm25), stemming=True, default_k=DEPTH, k_max=DEPTH
        ),
        BM25StoreInfo(name="fts5", path=FTS5_SCHEME + str(copy), default_k=DEPTH, k_max=DEPTH),
    ]
    config = RetrieverConfig(domains={COLLECTION: PerDomainConfig(bm25_stores=stores)})
    retriever = BM25RetrieverManager(config, logging.getLogger("parity-stemmed"))
    stores_named = ("pickle", "fts5")
    try:
        for query in ("integrating", "oscillation", "scaled synapses"):
            per_store = dict(retriever.retrieve_per_store(COLLECTION, query))
            found = {
                name: {str(doc.id) for doc, _ in per_store[f"BM25: {name}"]}
                for name in stores_named
            }
            assert found["pickle"] == found["fts5"], query
            assert found["pickle"], query
    finally:
        for store in stores:
            if store.loaded_object is not None and hasattr(store.loaded_object, "close"):
                store.loaded_object.close()
