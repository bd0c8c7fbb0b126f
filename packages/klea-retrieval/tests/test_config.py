"""Tests of the stores configuration models and ``read_retriever_config``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from klea_utils.stores.config import (
    BM25StoreInfo,
    FilterFieldInfo,
    PerDomainConfig,
    RetrieverConfig,
    StoreInfo,
    VectorStoreInfo,
    read_retriever_config,
)
from klea_utils.stores.exceptions import StoreConfigError
from pydantic import ValidationError

FULL = {
    "domains": {
        "papers": {
            "description": "Published papers",
            "vector_stores": [
                {"name": "papers-vs", "path": "chroma:/data/papers", "default_k": 5, "k_max": 20},
                {"name": "papers-qdrant", "path": "qdrant:http://localhost:6333"},
            ],
            "bm25_stores": [{"name": "papers-bm25", "path": "/data/papers.bm25", "k_inc": 2}],
            "filter_fields": [
                {"name": "year", "description": "Publication year", "value_type": "int"},
                {"name": "authors", "description": "Author names", "value_type": "list"},
                {"name": "journal", "description": "Journal name"},
            ],
        },
        "code": {},
    }
}


def test_seed_signatures_and_defaults() -> None:
    store = StoreInfo(name="s", path="/p")
    assert (store.default_k, store.k_max, store.k_inc, store.loaded_object) == (None,) * 4
    assert issubclass(VectorStoreInfo, StoreInfo)
    assert issubclass(BM25StoreInfo, StoreInfo)
    assert FilterFieldInfo(name="x", description="d").value_type == "string"
    domain = PerDomainConfig()
    assert (domain.description, domain.vector_stores, domain.bm25_stores) == ("", [], [])
    assert domain.filter_fields == []
    for model in (StoreInfo, VectorStoreInfo, BM25StoreInfo, PerDomainConfig, RetrieverConfig):
        assert model.model_config == {}
    assert FilterFieldInfo.model_config == {}


def test_full_configuration_round_trips() -> None:
    config = RetrieverConfig.model_validate(FULL)
    papers = config.domains["papers"]
    assert [s.name for s in papers.vector_stores] == ["papers-vs", "papers-qdrant"]
    assert papers.bm25_stores[0].k_inc == 2
    assert papers.filter_fields[1].value_type == "list"
    assert config.domains["code"] == PerDomainConfig()
    papers.vector_stores[0].loaded_object = object()
    dumped = config.model_dump()
    assert "loaded_object" not in dumped["domains"]["papers"]["vector_stores"][0]
    assert RetrieverConfig.model_validate(dumped) == RetrieverConfig.model_validate(FULL)


@pytest.mark.parametrize(
    ("store", "says"),
    [
        ({"name": "", "path": "/p"}, "non-empty"),
        ({"name": "s", "path": " "}, "non-empty"),
        ({"name": "s", "path": "/p", "default_k": 0}, "default_k must be at least 1"),
        ({"name": "s", "path": "/p", "k_inc": -1}, "k_inc must be at least 1"),
        ({"name": "s", "path": "/p", "default_k": 8, "k_max": 4}, "exceeds k_max"),
    ],
)
def test_bad_store_values(store: dict[str, Any], says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        BM25StoreInfo.model_validate(store)


def test_vector_store_path_needs_a_scheme() -> None:
    with pytest.raises(ValidationError, match="scheme:location"):
        VectorStoreInfo(name="v", path="/data/no-scheme")


def test_duplicate_store_names_and_bad_fields() -> None:
    with pytest.raises(ValidationError, match="duplicate store names: a"):
        PerDomainConfig.model_validate({"vector_stores": [{"name": "a", "path": "chroma:/x"}] * 2})
    with pytest.raises(ValidationError, match="cannot start with"):
        FilterFieldInfo(name="$and", description="d")
    with pytest.raises(ValidationError, match="value_type"):
        FilterFieldInfo.model_validate({"name": "x", "description": "d", "value_type": "date"})
    with pytest.raises(ValidationError, match="domain names"):
        RetrieverConfig.model_validate({"domains": {"": {}}})


def test_read_retriever_config(tmp_path: Path) -> None:
    path = tmp_path / "stores.json"
    path.write_text(json.dumps(FULL), encoding="utf-8")
    assert read_retriever_config(path) == RetrieverConfig.model_validate(FULL)
    assert read_retriever_config(str(path)) == RetrieverConfig.model_validate(FULL)


def test_read_retriever_config_errors_name_file_and_field(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_retriever_config(tmp_path / "absent.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"domains": {', encoding="utf-8")
    with pytest.raises(StoreConfigError, match=r"broken\.json: not valid JSON \(line 1"):
        read_retriever_config(broken)
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"domains": {"papers": {"vector_stores": [{"name": "v"}]}}}), encoding="utf-8"
    )
    with pytest.raises(StoreConfigError) as info:
        read_retriever_config(bad)
    assert f"{bad}: domains.papers.vector_stores.0.path: Field required" in str(info.value)
    assert isinstance(info.value, ValueError)
    missing = tmp_path / "missing.json"
    missing.write_text("{}", encoding="utf-8")
    with pytest.raises(StoreConfigError, match="domains: Field required"):
        read_retriever_config(missing)


def test_the_guide_example_loads(tmp_path: Path) -> None:
    guide = Path(__file__).parents[3] / "docs" / "guides" / "configuration.md"
    text = guide.read_text(encoding="utf-8")
    (example,) = re.findall(r"```json\n(.*?)```", text, re.S)
    path = tmp_path / "stores.json"
    path.write_text(example, encoding="utf-8")
    config = read_retriever_config(path)
    assert set(config.domains) == {"neuroscience", "software"}
    neuro = config.domains["neuroscience"]
    assert [s.name for s in neuro.bm25_stores] == ["papers-keywords", "papers-fts"]
    assert [f.value_type for f in neuro.filter_fields] == ["int", "list", "string"]
