"""Test support for klea-ingest's store side: a loopback DOI server and small helpers."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass
class Route:
    """A canned answer: HTTP status, JSON body, and a delay before answering."""

    status: int = 200
    body: Any = None
    delay: float = 0.0


@dataclass
class DoiServer:
    """A real HTTP server on 127.0.0.1 serving Crossref/OpenAlex/S2-shaped JSON."""

    base_url: str
    routes: dict[str, Route] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)

    def route(self, path: str, status: int = 200, body: Any = None, delay: float = 0.0) -> None:
        """Answer GET ``path`` (path and query, as requested) with the given response."""
        self.routes[path] = Route(status, body, delay)


@contextmanager
def doi_server() -> Iterator[DoiServer]:
    """Run a :class:`DoiServer` in a background thread for the duration of the block."""
    state = DoiServer(base_url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests.append(self.path)
            route = state.routes.get(self.path, Route(404, {"message": "not found"}))
            if route.delay:
                time.sleep(route.delay)
            payload = json.dumps(route.body).encode()
            try:
                self.send_response(route.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def crossref_body(title: str, authors: list[tuple[str, str]], year: int, journal: str) -> Any:
    """A Crossref ``/works/{doi}`` answer."""
    return {
        "status": "ok",
        "message": {
            "title": [title],
            "author": [{"given": g, "family": f} for g, f in authors],
            "issued": {"date-parts": [[year, 1, 1]]},
            "container-title": [journal],
            "subject": ["Neuroscience"],
            "URL": "https://doi.org/x",
        },
    }


def openalex_body(title: str, authors: list[str], year: int, journal: str) -> Any:
    """An OpenAlex ``/works/doi:{doi}`` answer."""
    return {
        "title": title,
        "authorships": [{"author": {"display_name": a}} for a in authors],
        "publication_year": year,
        "primary_location": {"source": {"display_name": journal}},
        "keywords": [{"display_name": "modelling"}],
        "doi": "https://doi.org/x",
    }


def s2_body(title: str, authors: list[str], year: int, journal: str) -> Any:
    """A Semantic Scholar ``/graph/v1/paper/DOI:{doi}`` answer."""
    return {
        "title": title,
        "authors": [{"name": a} for a in authors],
        "year": year,
        "journal": {"name": journal},
        "venue": journal,
    }


# -- store-phase helpers ----------------------------------------------------------------

import hashlib  # noqa: E402
import logging  # noqa: E402

from klea_utils.stores.ingestion import StoresBuilder  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402


class CountingEmbeddings(Embeddings):
    """Real embeddings, counting how many texts were embedded (to prove skips)."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.embedded = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed and count."""
        self.embedded += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        """Embed a query (not counted)."""
        return self.inner.embed_query(text)


def minilm() -> Embeddings:
    """The packaged all-MiniLM-L6-v2 model through klea-retrieval's loader (offline)."""
    from klea_utils.stores.embedding_models import load_embeddings

    return load_embeddings("huggingface:all-MiniLM-L6-v2", device="cpu")


def make_builder(embeddings: Embeddings, batch: int = 4) -> StoresBuilder:
    """A ``StoresBuilder`` whose store phase embeds with ``embeddings``."""
    return StoresBuilder(
        "huggingface:all-MiniLM-L6-v2",
        logging.getLogger("klea-test-store"),
        embed_batch_size=batch,
        embeddings=embeddings,
    )


def write_source(
    source: Path, name: str, paragraphs: list[str]
) -> tuple[str, list[Document], Path]:
    """Write a markdown source file and return its ``(file_hash, docs, path)`` result."""
    path = source / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(paragraphs), encoding="utf-8")
    file_hash = hashlib.sha256(path.read_bytes()).hexdigest()
    docs = [
        Document(
            page_content=text,
            metadata={
                "file_name": path.name,
                "file_hash": file_hash,
                "headings": ["Section"],
                "title": f"Title of {path.stem}",
                "authors": ["Ankur Sinha"],
                "_sources": {"title": "x"},
            },
        )
        for text in paragraphs
    ]
    return file_hash, docs, path


def query_store(store_uri: str, collection: str, query: str, k: int = 3) -> list[Document]:
    """Query a stored collection through klea-retrieval's ``VSRetriever`` manager."""
    from klea_utils.stores.config import PerDomainConfig, RetrieverConfig, VectorStoreInfo
    from klea_utils.stores.retrieval.vs import VSRetriever

    config = RetrieverConfig(
        domains={
            "d": PerDomainConfig(vector_stores=[VectorStoreInfo(name=collection, path=store_uri)])
        }
    )
    manager = VSRetriever(
        config, logging.getLogger("klea-test-query"), "huggingface:all-MiniLM-L6-v2", default_k=k
    )
    manager.setup()
    try:
        return [doc for doc, _ in manager.retrieve("d", query)]
    finally:
        for info in config.domains["d"].vector_stores:
            engine = getattr(info.loaded_object, "_engine", None)
            if engine is not None:
                engine.dispose()


def fts5_records(path: Path) -> dict[str, Any]:
    """Every record of the FTS5 index at ``path``: id -> its ``SearchDocument``."""
    import asyncio

    from sci_etl_core.search import AsyncSqliteFts5Store

    async def read() -> dict[str, Any]:
        store = AsyncSqliteFts5Store(path)
        try:
            return dict(await store.get_documents(await store.filter_ids()))
        finally:
            await store.aclose()

    return asyncio.run(read())
