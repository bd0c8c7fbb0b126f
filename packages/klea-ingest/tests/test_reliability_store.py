"""The store phase never trusts its manifest blindly (issue 19, item 1).

A store that lost what the manifest records is refilled; a store is identified by its
resolved URI, so a relative path run from another folder, an absolute path naming the
same store, and two stores under one collection name each get what they should.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from chromadb.api.client import SharedSystemClient
from ingest_store_support import make_builder, write_source
from klea_utils.stores.retrieval.bm25 import read_corpus
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.embeddings import DeterministicFakeEmbedding


@pytest.fixture
def builder():
    return make_builder(DeterministicFakeEmbedding(size=16), batch=2)


def _paras(tag: str, n: int) -> list[str]:
    return [f"{tag} paragraph {i} on dendrites and synapses." for i in range(n)]


def _results(source: Path, a_chunks: int = 3, tag: str = "a") -> list:
    return [
        write_source(source, "a.md", _paras(tag, a_chunks)),
        write_source(source, "b.md", _paras("b", 2)),
    ]


def _contents(uri: str, builder) -> dict[str, str]:
    store = instantiate_vector_store(uri, "papers", builder.writer.embeddings, builder.logger)
    got = store.get()
    return dict(zip(got["ids"], got["documents"], strict=True))


def test_deleted_store_folder_is_refilled(tmp_path: Path, builder) -> None:
    source, store_dir = tmp_path / "src", tmp_path / "store"
    uri = f"chroma:{store_dir}"
    builder.store_all(iter(_results(source)), uri, "papers", source)
    assert len(_contents(uri, builder)) == 5
    shutil.rmtree(store_dir)
    SharedSystemClient.clear_system_cache()  # as a new process would find it
    summary = builder.store_all(iter(_results(source)), uri, "papers", source)
    assert summary.files_restored == 2
    assert summary.chunks_added == 5
    assert len(_contents(uri, builder)) == 5
    # the next run finds everything and skips it
    assert builder.store_all(iter(_results(source)), uri, "papers", source).files_skipped == 2


def test_dropped_chunks_are_added_again(tmp_path: Path, builder) -> None:
    source, uri = tmp_path / "src", f"chroma:{tmp_path / 'store'}"
    builder.store_all(iter(_results(source)), uri, "papers", source)
    store = instantiate_vector_store(uri, "papers", builder.writer.embeddings, builder.logger)
    store.delete(ids=["b.md:1"])
    summary = builder.store_all(iter(_results(source)), uri, "papers", source)
    assert (summary.files_skipped, summary.files_restored) == (1, 1)
    assert "b.md:1" in _contents(uri, builder)


def test_relative_store_from_another_folder_is_another_store(
    tmp_path: Path, builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src"
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    monkeypatch.chdir(first)
    builder.store_all(iter(_results(source)), "chroma:stores/chroma", "papers", source)
    monkeypatch.chdir(second)
    summary = builder.store_all(iter(_results(source)), "chroma:stores/chroma", "papers", source)
    assert summary.files_added == 2
    assert len(_contents(f"chroma:{second / 'stores' / 'chroma'}", builder)) == 5
    assert len(_contents(f"chroma:{first / 'stores' / 'chroma'}", builder)) == 5


def test_relative_then_absolute_path_is_one_store(
    tmp_path: Path, builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src"
    monkeypatch.chdir(tmp_path)
    builder.store_all(iter(_results(source)), "chroma:store", "papers", source, bm25_path="c.bm25")
    summary = builder.store_all(
        iter(_results(source)),
        f"chroma:{tmp_path / 'store'}",
        "papers",
        source,
        bm25_path=str(tmp_path / "c.bm25"),
    )
    assert summary.files_skipped == 2
    assert summary.chunks_added == 0
    assert len(read_corpus(tmp_path / "c.bm25")) == 5


def test_two_stores_under_one_collection_name_keep_their_own_records(
    tmp_path: Path, builder
) -> None:
    source = tmp_path / "src"
    one, two = f"chroma:{tmp_path / 'one'}", f"chroma:{tmp_path / 'two'}"
    builder.store_all(iter(_results(source)), one, "papers", source)
    builder.store_all(iter(_results(source)), two, "papers", source)
    changed = _results(source, a_chunks=2, tag="new")
    builder.store_all(iter(changed), one, "papers", source)
    got = _contents(one, builder)
    assert sorted(k for k in got if k.startswith("a.md")) == ["a.md:0", "a.md:1"]
    assert got["a.md:0"].startswith("new")
    # the second store still holds the old version until it is written to
    assert builder.store_all(iter(changed), two, "papers", source).files_replaced == 1
    assert sorted(_contents(two, builder)) == sorted(got)
