"""The packaged MiniLM exported to ONNX: vectors match sentence-transformers within cosine
0.999, queries pick it automatically when the export exists, and it runs without torch."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from klea_utils.stores.embedding_models import (
    ONNX_QUERIES_ENV_VAR,
    OnnxMiniLMEmbeddings,
    SentenceTransformerEmbeddings,
    export_minilm_onnx,
    load_query_embeddings,
)
from klea_utils.stores.onnx_minilm import ONNX_CACHE_ENV_VAR, minilm_onnx_path

pytestmark = pytest.mark.slow

TEXTS = [
    "How do chaperones help proteins fold under heat stress?",
    "dendritic integration",
    "",
    "Équilibre climatique: sensibilité — 2.5 à 4 °C (IPCC AR6).",
    " ".join(f"word{i} cortex neurons spike" for i in range(300)),  # past 256 tokens
]


@pytest.fixture(scope="module")
def onnx_cache() -> Path:
    """The session's export folder (conftest.py): one export per session, shared with the
    CLI tests that export as a side effect, never in the user's home cache."""
    return export_minilm_onnx().parent


def test_the_suite_exports_into_a_session_folder_not_the_home_cache(onnx_cache: Path) -> None:
    folder = os.environ[ONNX_CACHE_ENV_VAR]
    assert minilm_onnx_path().parent == Path(folder) == onnx_cache
    home = Path.home() / ".cache" / "klea" / "onnx"
    assert not onnx_cache.resolve().is_relative_to(home.resolve())


def test_vectors_match_sentence_transformers(onnx_cache: Path) -> None:
    onnx = OnnxMiniLMEmbeddings(minilm_onnx_path(onnx_cache), batch_size=2)
    from klea_utils.stores.embedding_models import load_embeddings

    reference = load_embeddings(device="cpu")
    got = np.array(onnx.embed_documents(TEXTS))
    want = np.array(reference.embed_documents(TEXTS))
    assert got.shape == want.shape == (len(TEXTS), 384)
    cosines = (got * want).sum(axis=1) / (
        np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1)
    )
    assert cosines.min() >= 0.999, cosines
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert onnx.embed_query(TEXTS[0]) == pytest.approx(got[0].tolist(), abs=1e-5)


def test_export_is_kept_once_made(onnx_cache: Path) -> None:
    path = minilm_onnx_path(onnx_cache)
    stamp = path.stat().st_mtime_ns
    assert export_minilm_onnx(path) == path
    assert path.stat().st_mtime_ns == stamp
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0600


def test_queries_use_the_export_when_it_exists(
    onnx_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ONNX_CACHE_ENV_VAR, str(onnx_cache))
    assert isinstance(load_query_embeddings(), OnnxMiniLMEmbeddings)
    monkeypatch.setenv(ONNX_QUERIES_ENV_VAR, "0")
    assert isinstance(load_query_embeddings(), SentenceTransformerEmbeddings)
    monkeypatch.delenv(ONNX_QUERIES_ENV_VAR)
    monkeypatch.setenv(ONNX_CACHE_ENV_VAR, str(tmp_path / "empty"))
    assert isinstance(load_query_embeddings(), SentenceTransformerEmbeddings)
    with pytest.raises(FileNotFoundError, match="export_minilm_onnx"):
        OnnxMiniLMEmbeddings(tmp_path / "none.onnx")


def test_a_query_embeds_without_importing_torch(onnx_cache: Path) -> None:
    code = (
        "import sys\n"
        "from klea_utils.stores.embedding_models import load_query_embeddings\n"
        "v = load_query_embeddings().embed_query('cortex')\n"
        "assert len(v) == 384\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'sentence_transformers') "
        "if m in sys.modules)\n"
        "print(heavy)\n"
    )
    env = {**os.environ, ONNX_CACHE_ENV_VAR: str(onnx_cache)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
