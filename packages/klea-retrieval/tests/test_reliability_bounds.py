"""Inputs that used to escape the package's errors are bounded (issue 19, item 7)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores.config import read_retriever_config
from klea_utils.stores.exceptions import MetadataFilterError, StoreConfigError
from klea_utils.stores.filters import to_chroma_filter, validate_metadata_filter
from klea_utils.stores.retrieve_cli import app
from typer.testing import CliRunner


def _nested_and(depth: int) -> dict:
    f: dict = {"year": 2020}
    for _ in range(depth):
        f = {"$and": [f, {"year": 2020}]}
    return f


def _deep_json(depth: int) -> str:
    return "[" * depth + "]" * depth


@given(big=st.integers(min_value=2**63) | st.integers(max_value=-(2**63)))
def test_huge_integers_are_a_filter_error(big: int) -> None:
    with pytest.raises(MetadataFilterError, match="out of range"):
        to_chroma_filter({"year": {"$in": [big, 1.0]}})
    with pytest.raises(MetadataFilterError, match="out of range"):
        validate_metadata_filter({"year": {"$gte": big}})


def test_the_issue_example() -> None:
    with pytest.raises(MetadataFilterError, match=r"year\.\$in\[0\].*out of range"):
        to_chroma_filter({"year": {"$in": [10**400, 1.0]}})


def test_deeply_nested_filters_are_a_filter_error() -> None:
    assert validate_metadata_filter(_nested_and(32))
    with pytest.raises(MetadataFilterError, match="nested more than 32 levels"):
        validate_metadata_filter(_nested_and(1000))


def _config(tmp_path: Path, store: dict) -> Path:
    path = tmp_path / "stores.json"
    path.write_text(json.dumps({"domains": {"d": {"bm25_stores": [store]}}}))
    return path


def test_stores_config_refuses_unknown_keys_and_boolean_k(tmp_path: Path) -> None:
    store = {"name": "p", "path": str(tmp_path / "c.pkl")}
    assert read_retriever_config(_config(tmp_path, {**store, "default_k": 3}))
    with pytest.raises(StoreConfigError, match="defualt_k"):
        read_retriever_config(_config(tmp_path, {**store, "defualt_k": 3}))
    with pytest.raises(StoreConfigError, match="default_k must be an integer"):
        read_retriever_config(_config(tmp_path, {**store, "default_k": True}))


def test_stores_config_nested_too_deep(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"domains": ' + _deep_json(1000) + "}")
    with pytest.raises(StoreConfigError, match=r"deep\.json.*nested more than 64 levels"):
        read_retriever_config(path)


def test_cli_filter_nested_too_deep(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["what", "--bm25-store", str(tmp_path / "c.pkl"), "--filter", _deep_json(1000)]
    )
    assert result.exit_code == 2
    assert "nested more than 64 levels" in result.output
    assert "RecursionError" not in result.output


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats()
    | st.text(max_size=6)
    | st.sampled_from(["$and", "$or", "$in", "$eq", "$gt", "$contains", "year"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["$and", "$or", "$in", "$nin", "$eq", "$gte", "$contains", "year", "$x"]
            )
            | st.text(max_size=4),
            inner,
            max_size=3,
        )
    ),
    max_leaves=20,
)


@given(value=_json)
def test_any_json_filter_raises_only_the_filter_error(value) -> None:
    for translate in (validate_metadata_filter, to_chroma_filter):
        with contextlib.suppress(MetadataFilterError):
            translate(value)
