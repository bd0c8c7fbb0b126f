"""Embedding model specs and the packaged offline MiniLM."""

from __future__ import annotations

import math

import pytest
from klea_utils.stores.embedding_models import (
    DEFAULT_EMBEDDING_MODEL,
    EmbeddingModelSpec,
    SentenceTransformerEmbeddings,
    load_embeddings,
    parse_embedding_model,
)
from klea_utils.stores.exceptions import EmbeddingModelError, MissingExtraError


def test_parse_specs():
    assert parse_embedding_model("huggingface:BAAI/bge-m3") == EmbeddingModelSpec(
        "huggingface", "BAAI/bge-m3"
    )
    assert parse_embedding_model("huggingface:/models/x:local") == EmbeddingModelSpec(
        "huggingface", "/models/x", local_only=True
    )
    assert parse_embedding_model("ollama:nomic-embed-text:v1.5") == EmbeddingModelSpec(
        "ollama", "nomic-embed-text:v1.5"
    )
    assert str(parse_embedding_model("huggingface:m:local")) == "huggingface:m:local"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("all-MiniLM-L6-v2", "provider:model"),
        ("openai:text-embedding-3", "unknown embedding provider 'openai'"),
        ("huggingface:", "names no model"),
    ],
)
def test_bad_specs_are_clear_errors(spec, message):
    with pytest.raises(EmbeddingModelError, match=message):
        load_embeddings(spec)


def test_bad_device_is_rejected():
    with pytest.raises(ValueError, match="device"):
        load_embeddings(DEFAULT_EMBEDDING_MODEL, device="tpu")  # type: ignore[arg-type]


def test_missing_extra_names_what_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "langchain_ollama", None)
    with pytest.raises(MissingExtraError, match=r"klea-retrieval\[ollama\]"):
        load_embeddings("ollama:nomic-embed-text")
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ImportError, match=r"klea-retrieval\[huggingface\]"):
        load_embeddings("huggingface:some/model")


def test_ollama_spec_builds_langchain_ollama_embeddings():
    embeddings = load_embeddings("ollama:nomic-embed-text:latest")
    assert type(embeddings).__name__ == "OllamaEmbeddings"
    assert embeddings.model == "nomic-embed-text:latest"


@pytest.fixture(scope="module")
def minilm():
    return load_embeddings(DEFAULT_EMBEDDING_MODEL, device="cpu")


@pytest.mark.slow
def test_default_model_loads_offline_and_normalizes(minilm):
    assert isinstance(minilm, SentenceTransformerEmbeddings)
    vectors = minilm.embed_documents(["spiking neurons", "dendritic integration"])
    assert len(vectors) == 2
    assert len(vectors[0]) == 384 == minilm.dimension
    assert all(math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-5) for v in vectors)
    assert minilm.embed_documents([]) == []
    same = load_embeddings("huggingface:sentence-transformers/all-MiniLM-L6-v2", device="cpu")
    assert same.embed_query("spiking neurons") == pytest.approx(vectors[0], abs=1e-5)


def test_unloadable_local_model_is_an_embedding_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(EmbeddingModelError, match="cannot load"):
        load_embeddings(f"huggingface:{tmp_path / 'empty'}", device="cpu")
