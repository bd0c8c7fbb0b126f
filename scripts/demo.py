"""The main job: ingest a folder of papers, then answer questions two ways.

1. ``klea-ingest`` converts and chunks the folder (Docling, memory-capped workers, OCR for
   scanned PDFs) and writes a vector store, a BM25 corpus and an FTS5 index of the chunks.
2. ``klea-retrieval`` answers each question from those stores (vector + BM25, fused with
   RRF, re-ranked by recency) and prints the serialized references an LLM would read.
3. ``sci-etl-search`` indexes one document per paper (FTS5 + a vector memory) and answers
   each question with hybrid search, printing ranked hits with highlighted snippets.
4. It prints the ``klea-serve`` command that keeps these stores loaded for a search page,
   a JSON API and MCP.

Run it through ``scripts/demo``, which sets up the environment first.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.logging import RichHandler
from rich.text import Text

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = ROOT / "examples" / "corpus" / "papers"
DEFAULT_QUESTIONS = (
    "How do chaperones help proteins fold under heat stress?",
    "What is the likely range of equilibrium climate sensitivity?",
    "Which features predict off-target cleavage by Cas9?",
)
COLLECTION = "demo"
console = Console(stderr=True)
out = Console(soft_wrap=True)


@dataclass(frozen=True)
class Paper:
    """One source file as a record for sci-etl-search."""

    record_id: str
    title: str
    abstract: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="scripts/demo",
        description="Ingest a folder of papers, then answer questions through klea retrieval "
        "and sci-etl-search hybrid search.",
    )
    parser.add_argument(
        "--source",
        type=Path,
        default=DEFAULT_SOURCE,
        help="folder of papers to ingest (default: the sample corpus in examples/corpus/papers)",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=ROOT / ".demo",
        help="where the copy of the folder and the stores go (default: .demo)",
    )
    parser.add_argument(
        "--store-uri",
        default=None,
        help="vector store URI, e.g. chroma:/path, qdrant:http://host:6333, "
        "pgvector:postgresql+psycopg://user@host/db (default: a Chroma folder in --workdir)",
    )
    parser.add_argument(
        "--query",
        action="append",
        dest="queries",
        metavar="QUESTION",
        help="a question to answer (repeatable; default: three questions about the sample corpus)",
    )
    parser.add_argument(
        "--top-k", type=int, default=3, help="hits to show per question (default 3)"
    )
    parser.add_argument("--fresh", action="store_true", help="delete --workdir first and rebuild")
    return parser.parse_args()


def ingest(source: Path, workdir: Path, store_uri: str) -> tuple[Path, Path, Path]:
    from klea_utils.stores.embedding_models import DEFAULT_EMBEDDING_MODEL
    from klea_utils.stores.ingestion import StoresBuilder

    corpus = workdir / "corpus"
    if not corpus.exists():
        shutil.copytree(source, corpus)
    bm25 = workdir / "bm25-corpus.pkl"
    fts5 = workdir / "chunks-fts5.sqlite"
    builder = StoresBuilder(
        DEFAULT_EMBEDDING_MODEL, logging.getLogger("klea-ingest"), max_tokens=256
    )
    builder.build(
        str(corpus),
        store_uri,
        COLLECTION,
        bm25_path=str(bm25),
        fts5_path=str(fts5),
        worker_batch_size=50,
    )
    return corpus, bm25, fts5


def write_stores_config(workdir: Path, store_uri: str, bm25: Path, fts5: Path) -> Path:
    config = {
        "domains": {
            "papers": {
                "description": "The demo corpus",
                "vector_stores": [{"name": COLLECTION, "path": store_uri}],
                "bm25_stores": [
                    {"name": "bm25", "path": str(bm25)},
                    {"name": "fts5", "path": f"fts5:{fts5}"},
                ],
            }
        }
    }
    path = workdir / "stores.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


def klea_answers(stores: Path, questions: list[str], top_k: int) -> None:
    from klea_utils.stores.pipeline import KleaPipeline
    from klea_utils.stores.utils import (
        load_retriever_config,
        serialize_reference_material,
        truncate_reference_material,
    )

    pipeline = KleaPipeline(load_retriever_config(stores), k=top_k)
    try:
        for question in questions:
            result = pipeline.retrieve("papers", question, limit=top_k)
            material = truncate_reference_material({"papers": result.hits}, 1500)
            out.rule(f"[bold]klea retrieval[/]: {question}")
            out.print(serialize_reference_material(material), markup=False, highlight=False)
    finally:
        pipeline.close()


def papers_from_corpus(bm25: Path) -> tuple[list[Paper], dict[str, str]]:
    from klea_utils.stores.retrieval.bm25 import iter_corpus_documents
    from klea_utils.stores.utils import display_person_names

    chunks: dict[str, list[str]] = defaultdict(list)
    meta: dict[str, dict[str, Any]] = {}
    for doc in iter_corpus_documents(bm25):
        name = doc.metadata["file_name"]
        chunks[name].append(doc.page_content)
        meta.setdefault(name, doc.metadata)
    papers = []
    for name, metadata in sorted(meta.items()):
        kept = {k: metadata[k] for k in ("year", "journal", "doi") if k in metadata}
        if isinstance(metadata.get("authors"), list):
            kept["authors"] = display_person_names(metadata["authors"])
        papers.append(Paper(name, str(metadata.get("title") or name), metadata=kept))
    return papers, {name: "\n\n".join(texts) for name, texts in chunks.items()}


async def sci_etl_answers(workdir: Path, bm25: Path, questions: list[str], top_k: int) -> None:
    from sci_etl_core.embeddings.finder_async import AsyncSimilarArticleFinder
    from sci_etl_core.embeddings.ingest_async import AsyncChunkIngestor
    from sci_etl_core.embeddings.sentence_transformers_async import AsyncSentenceTransformerEmbedder
    from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore
    from sci_etl_core.search import (
        AsyncHybridSearcher,
        AsyncSearchIndexer,
        AsyncSqliteFts5Store,
        question_query,
    )

    papers, texts = papers_from_corpus(bm25)
    text_store = AsyncSqliteFts5Store(
        workdir / "papers-fts5.sqlite", facet_keys=("year", "journal", "authors")
    )
    vectors = AsyncSqliteEmbeddingStore(workdir / "papers-vectors.sqlite")
    embedder = AsyncSentenceTransformerEmbedder()
    try:
        indexer, ingestor = AsyncSearchIndexer(text_store), AsyncChunkIngestor(embedder, vectors)
        with console.status("sci-etl-search: indexing one document per paper"):
            for paper in papers:
                await indexer.ingest(paper, texts[paper.record_id])
                await ingestor.ingest(paper, texts[paper.record_id])
        searcher = AsyncHybridSearcher(text_store, AsyncSimilarArticleFinder(embedder, vectors))
        for question in questions:
            query = question_query(question) or question
            outcome = await searcher.search(query, top_k=top_k)
            out.rule(f"[bold]sci-etl-search hybrid[/]: {question}")
            for rank, hit in enumerate(outcome.hits, start=1):
                legs = f"lexical #{hit.lexical_rank or '-'}, semantic #{hit.semantic_rank or '-'}"
                out.print(
                    Text.assemble((f"{rank}. ", "bold"), (hit.title, "bold cyan"), f"  ({legs})")
                )
                snippet = Text(hit.snippet.replace("\n", " "))
                for start, end in hit.highlights:
                    snippet.stylize("bold yellow", start, end)
                out.print(Text("   ") + snippet)
            if outcome.degraded or outcome.skipped:
                out.print(f"degraded: {outcome.degraded}, skipped: {outcome.skipped}")
    finally:
        await text_store.aclose()
        await vectors.aclose()


def main() -> None:
    args = parse_args()
    logging.basicConfig(
        level=logging.INFO,
        format="%(message)s",
        handlers=[RichHandler(console=console, show_path=False)],
    )
    # The model libraries' own INFO lines and "Loading weights" bars would cross the output.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for name in ("sentence_transformers", "transformers", "huggingface_hub", "httpx"):
        logging.getLogger(name).setLevel(logging.WARNING)
    workdir = args.workdir.resolve()
    if args.fresh:
        shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True, exist_ok=True)
    store_uri = args.store_uri or f"chroma:{workdir / 'chroma'}"
    questions = args.queries or list(DEFAULT_QUESTIONS)
    console.rule("[bold]1. klea-ingest: convert, chunk and store")
    _corpus, bm25, fts5 = ingest(args.source.resolve(), workdir, store_uri)
    stores = write_stores_config(workdir, store_uri, bm25, fts5)
    console.rule("[bold]2. klea-retrieval: references for an LLM")
    klea_answers(stores, questions, args.top_k)
    console.rule("[bold]3. sci-etl-search: hybrid search with highlighted snippets")
    asyncio.run(sci_etl_answers(workdir, bm25, questions, args.top_k))
    print_serve_command(workdir, stores)


def print_serve_command(workdir: Path, stores: Path) -> None:
    """Tell how to keep these stores loaded in one process, for people and for agents."""
    command = (
        f"uv run klea-serve --stores-config {stores} "
        f"--fts5-index {workdir / 'papers-fts5.sqlite'} "
        f"--vectors {workdir / 'papers-vectors.sqlite'}"
    )
    console.rule("[bold]4. klea-serve: keep the stores loaded")
    out.print("Search page and JSON API on http://127.0.0.1:8765/ (MCP at /mcp):", highlight=False)
    out.print(f"  {command}", markup=False, highlight=False)
    out.print("An agent that starts its own MCP server over stdio:", highlight=False)
    out.print(f"  {command} --mcp", markup=False, highlight=False)


if __name__ == "__main__":
    main()
