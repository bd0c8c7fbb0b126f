"""load_retriever_config caching and resolve_stores_config_path failing closed."""

from __future__ import annotations

import json
import logging
import os

import pytest
from klea_utils.stores import utils
from klea_utils.stores.utils import (
    STORES_CONFIG_ENV_VAR,
    STORES_CONFIG_META_KEY,
    load_retriever_config,
    resolve_stores_config_path,
)

CONFIG = {"domains": {"neuro": {"description": "d", "bm25_stores": [{"name": "b", "path": "/x"}]}}}


@pytest.fixture
def stores_file(tmp_path):
    path = tmp_path / "stores.json"
    path.write_text(json.dumps(CONFIG), encoding="utf-8")
    return path


def test_config_is_cached_until_the_file_changes(stores_file):
    first = load_retriever_config(stores_file)
    assert load_retriever_config(str(stores_file)) is first
    changed = {"domains": {**CONFIG["domains"], "other": {}}}
    stores_file.write_text(json.dumps(changed), encoding="utf-8")
    stat = stores_file.stat()
    os.utime(stores_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000))
    second = load_retriever_config(stores_file)
    assert second is not first
    assert set(second.domains) == {"neuro", "other"}


def test_bad_files_name_the_file_and_field(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"missing\.json"):
        load_retriever_config(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.json.*not valid JSON"):
        load_retriever_config(bad)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"domains": {"d": {"bm25_stores": [{"path": "/x"}]}}}))
    with pytest.raises(ValueError, match=r"wrong\.json") as info:
        load_retriever_config(wrong)
    assert "name" in str(info.value)


def test_resolve_prefers_the_request_path_and_validates_it(stores_file, tmp_path, monkeypatch):
    monkeypatch.delenv(STORES_CONFIG_ENV_VAR, raising=False)
    utils._host_stores_config_path.cache_clear()
    assert resolve_stores_config_path(stores_file) == stores_file
    for bad, message in (
        ("", "empty"),
        ("stores.json", "not an absolute path"),
        (str(tmp_path / "nope.json"), "does not exist"),
        (str(tmp_path), "not a regular file"),
        (f"{stores_file}\n{stores_file}", "not exactly one path"),
    ):
        with pytest.raises(ValueError, match=message):
            resolve_stores_config_path(bad)
    invalid = tmp_path / "invalid.json"
    invalid.write_text("[]")
    with pytest.raises(ValueError, match=STORES_CONFIG_META_KEY):
        resolve_stores_config_path(invalid)


def test_resolve_falls_back_to_the_env_var_then_fails_closed(stores_file, monkeypatch, caplog):
    monkeypatch.setenv(STORES_CONFIG_ENV_VAR, str(stores_file))
    utils._host_stores_config_path.cache_clear()
    try:
        assert resolve_stores_config_path() == stores_file
        monkeypatch.delenv(STORES_CONFIG_ENV_VAR)
        assert resolve_stores_config_path() == stores_file  # read once per process
        utils._host_stores_config_path.cache_clear()
        with caplog.at_level(logging.WARNING):
            assert resolve_stores_config_path() is None
        assert STORES_CONFIG_META_KEY in caplog.text
        assert STORES_CONFIG_ENV_VAR in caplog.text
    finally:
        utils._host_stores_config_path.cache_clear()


def test_find_source_files_is_the_listing_and_needs_no_klea_ingest(tmp_path):
    from klea_utils.stores import source_listing

    assert utils.find_source_files is source_listing.find_source_files
    (tmp_path / "paper.pdf").write_bytes(b"%PDF-1.4")
    (tmp_path / "notes.qqq").write_text("x")
    assert utils.find_source_files(tmp_path) == [tmp_path / "paper.pdf"]
