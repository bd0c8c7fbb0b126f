"""The main job: ingest a folder of papers, then answer questions two ways.

1. ``klea-ingest`` converts and chunks the folder (Docling, memory-capped workers, OCR for
   scanned PDFs) and writes a vector store, a BM25 corpus and an FTS5 index of the chunks.
2. ``klea-retrieval`` answers each question from those stores (vector + BM25, fused with
   RRF, re-ranked by recency) and prints the serialized references an LLM would read.
3. ``sci-etl-search`` answers each question with hybrid search over the same stores (the
   FTS5 index of the chunks, and the vector store read through ``KleaVectorMemory``, so
   nothing is chunked or embedded twice), printing ranked passages with highlighted
   snippets.
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
from pathlib import Path

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


async def sci_etl_answers(fts5: Path, store_uri: str, questions: list[str], top_k: int) -> None:
    """Hybrid search over what step 1 wrote: the chunks' FTS5 index and their vectors.

    ``KleaVectorMemory`` reads the klea vector store as sci-etl-search's vector memory
    (one record per chunk, the ids of the FTS5 index), so nothing is chunked or embedded
    a second time; only the questions are embedded, with the model the store was built
    with.
    """
    from klea_utils.stores.embedding_models import DEFAULT_EMBEDDING_MODEL, load_query_embeddings
    from klea_utils.stores.sci_etl_vectors import LangChainEmbedder, open_vector_memory
    from sci_etl_core.embeddings.finder_async import AsyncSimilarArticleFinder
    from sci_etl_core.search import AsyncHybridSearcher, AsyncSqliteFts5Store, question_query

    embeddings = load_query_embeddings(DEFAULT_EMBEDDING_MODEL)
    vectors = open_vector_memory(store_uri, COLLECTION, embeddings)
    text_store = AsyncSqliteFts5Store(fts5)
    try:
        finder = AsyncSimilarArticleFinder(LangChainEmbedder(embeddings), vectors)
        searcher = AsyncHybridSearcher(text_store, finder)
        for question in questions:
            query = question_query(question) or question
            outcome = await searcher.search(query, top_k=top_k)
            out.rule(f"[bold]sci-etl-search hybrid[/]: {question}")
            for rank, hit in enumerate(outcome.hits, start=1):
                legs = f"lexical #{hit.lexical_rank or '-'}, semantic #{hit.semantic_rank or '-'}"
                out.print(
                    Text.assemble(
                        (f"{rank}. ", "bold"),
                        (hit.title, "bold cyan"),
                        (f"  {hit.record_id}", "dim"),
                        f"  ({legs})",
                    )
                )
                snippet = Text(hit.snippet.replace("\n", " "))
                for start, end in hit.highlights:
                    snippet.stylize("bold yellow", start, end)
                out.print(Text("   ") + snippet)
            if outcome.degraded or outcome.skipped:
                out.print(f"degraded: {outcome.degraded}, skipped: {outcome.skipped}")
    finally:
        await text_store.aclose()


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
    asyncio.run(sci_etl_answers(fts5, store_uri, questions, args.top_k))
    print_serve_command(stores)


def print_serve_command(stores: Path) -> None:
    """Tell how to keep these stores loaded in one process, for people and for agents.

    The stores configuration is enough: the domain's FTS5 index and vector store give the
    page hybrid search and the graph.
    """
    command = f"uv run klea-serve --stores-config {stores}"
    console.rule("[bold]4. klea-serve: keep the stores loaded")
    out.print("Search page and JSON API on http://127.0.0.1:8765/ (MCP at /mcp):", highlight=False)
    out.print(f"  {command}", markup=False, highlight=False)
    out.print("An agent that starts its own MCP server over stdio:", highlight=False)
    out.print(f"  {command} --mcp", markup=False, highlight=False)


if __name__ == "__main__":
    main()
