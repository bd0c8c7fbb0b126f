"""klea_utils.stores.fts5_writer: writing and pruning an fts5: index of chunks."""

from __future__ import annotations

import pytest
from klea_utils.stores.fts5_writer import (
    adelete_fts5_ids,
    awrite_fts5_chunks,
    delete_fts5_ids,
    write_fts5_chunks,
)
from klea_utils.stores.retrieval._fts5 import Fts5Bm25Index
from langchain_core.documents import Document


def chunks(n: int) -> list[tuple[str, Document]]:
    return [
        (f"paper.pdf:{i}", Document(page_content=f"granule cell number {i}", metadata={"i": i}))
        for i in range(n)
    ]


def test_batches_are_written_and_counted(tmp_path):
    path = tmp_path / "idx" / "bm25.sqlite"
    assert write_fts5_chunks(path, chunks(9), batch_size=4) == 9
    index = Fts5Bm25Index(path)
    try:
        assert index.count() == 9
        delete_fts5_ids(path, ["paper.pdf:0", "unknown:1"])
        assert index.count() == 8
    finally:
        index.close()


def test_a_chunk_id_written_again_is_replaced(tmp_path):
    path = tmp_path / "bm25.sqlite"
    write_fts5_chunks(path, chunks(2))
    write_fts5_chunks(path, chunks(2))
    index = Fts5Bm25Index(path)
    try:
        assert index.count() == 2
    finally:
        index.close()


async def test_async_writers_inside_an_event_loop(tmp_path):
    path = tmp_path / "a.sqlite"
    assert await awrite_fts5_chunks(path, chunks(2)) == 2
    await adelete_fts5_ids(path, ["paper.pdf:1"])
    index = Fts5Bm25Index(path)
    try:
        assert index.count() == 1
    finally:
        index.close()


def test_bad_ids_and_batch_sizes_are_refused(tmp_path):
    with pytest.raises(ValueError, match="chunk id"):
        write_fts5_chunks(tmp_path / "x.sqlite", [("", chunks(1)[0][1])])
    with pytest.raises(ValueError, match="batch_size"):
        write_fts5_chunks(tmp_path / "x.sqlite", chunks(1), batch_size=0)


def test_the_writers_are_the_layout_module_s_own():
    from klea_utils.stores.retrieval import fts5_index

    assert fts5_index.write_fts5_chunks is write_fts5_chunks
    with pytest.raises(AttributeError):
        _ = fts5_index.no_such_name


def _built_with(path, option: str) -> bool:
    """How the ``fts5:`` index at ``path`` was built: its ``stemming`` or ``multiscript``
    (the store opened with neither given follows the file)."""
    import asyncio

    from klea_utils.stores.retrieval.fts5_index import open_fts5_store

    async def read() -> bool:
        store = open_fts5_store(path)
        try:
            await store.count()
            return bool(getattr(store, option))
        finally:
            await store.aclose()

    return asyncio.run(read())


def _stems(path) -> bool:
    return _built_with(path, "stemming")


def _multiscript(path) -> bool:
    return _built_with(path, "multiscript")


def test_a_new_index_stems_unless_told_and_an_old_one_keeps_its_tokenizer(tmp_path):
    from klea_utils.stores._ingest.store.fts5_corpus import NEW_INDEX_STEMMING, Fts5IndexWriter

    docs = [Document(id="a.md:0", page_content="Inhibition of the enzyme slows it.")]
    new = Fts5IndexWriter(tmp_path / "new.sqlite", "papers", force=False)
    new.add("a.md", "h1", docs)
    assert NEW_INDEX_STEMMING is True
    assert _stems(tmp_path / "new.sqlite") is True
    index = Fts5Bm25Index(tmp_path / "new.sqlite")
    try:
        assert index.search("inhibiting enzymes", 3)
    finally:
        index.close()

    plain = Fts5IndexWriter(tmp_path / "plain.sqlite", "papers", force=False, stemming=False)
    plain.add("a.md", "h1", docs)
    assert _stems(tmp_path / "plain.sqlite") is False
    # A later run that makes no choice follows the index as it was built.
    again = Fts5IndexWriter(tmp_path / "plain.sqlite", "papers", force=False)
    again.add("b.md", "h2", [Document(id="b.md:0", page_content="Kinase assays.")])
    again.finish()
    assert _stems(tmp_path / "plain.sqlite") is False


def test_a_new_index_is_multiscript_and_an_old_one_keeps_its_segmentation(tmp_path):
    from klea_utils.stores._ingest.store.fts5_corpus import NEW_INDEX_MULTISCRIPT, Fts5IndexWriter
    from klea_utils.stores._ingest.store.manifest import sidecar_path
    from klea_utils.stores.retrieval.fts5_index import write_fts5_chunks

    docs = [Document(id="zh.md:0", page_content="本文提出一种新的图像分割方法。")]
    new = Fts5IndexWriter(tmp_path / "new.sqlite", "papers", force=False)
    new.add("zh.md", "h1", docs)
    assert NEW_INDEX_MULTISCRIPT is True
    assert _multiscript(tmp_path / "new.sqlite") is True
    index = Fts5Bm25Index(tmp_path / "new.sqlite")
    try:
        assert [doc.id for doc, _ in index.search("图像分割", 3)] == ["zh.md:0"]
    finally:
        index.close()

    old = tmp_path / "old.sqlite"
    write_fts5_chunks(old, [("zh.md:0", docs[0])], multiscript=False)
    sidecar_path(old).write_text('{"collection": "papers", "files": {}}', encoding="utf-8")
    again = Fts5IndexWriter(old, "papers", force=False)
    again.add("b.md", "h2", [Document(id="b.md:0", page_content="Kinase assays.")])
    again.finish()
    assert _multiscript(old) is False


def test_an_explicit_multiscript_choice_re_tokenizes_an_existing_index(tmp_path):
    from klea_utils.stores._ingest.store.fts5_corpus import Fts5IndexWriter
    from klea_utils.stores._ingest.store.manifest import sidecar_path
    from klea_utils.stores.retrieval.fts5_index import write_fts5_chunks

    def top(path, question):
        index = Fts5Bm25Index(path)
        try:
            return [doc.id for doc, _ in index.search(question, 3)]
        finally:
            index.close()

    zh = Document(id="zh.md:0", page_content="本文提出一种新的图像分割方法。")
    old = tmp_path / "old.sqlite"
    write_fts5_chunks(old, [("zh.md:0", zh)], multiscript=False)
    sidecar_path(old).write_text('{"collection": "papers", "files": {}}', encoding="utf-8")
    assert top(old, "图像分割") == []  # unicode61 holds the whole Han run as one token
    on = Fts5IndexWriter(old, "papers", force=False, multiscript=True)
    on.add("b.md", "h2", [Document(id="b.md:0", page_content="Kinase assays.")])
    assert on.finish() is True
    assert _multiscript(old) is True
    assert top(old, "图像分割") == ["zh.md:0"]
    assert top(old, "kinase") == ["b.md:0"]

    off = Fts5IndexWriter(old, "papers", force=False, multiscript=False)
    assert off.finish() is True
    assert _multiscript(old) is False
    assert top(old, "kinase") == ["b.md:0"]

    fresh = Fts5IndexWriter(tmp_path / "fresh.sqlite", "papers", force=False, multiscript=False)
    fresh.add("zh.md", "h1", [zh])
    assert fresh.finish() is False  # built as asked
    assert _multiscript(tmp_path / "fresh.sqlite") is False


def test_an_index_built_before_the_list_keys_is_tagged_for_them(tmp_path):
    import asyncio

    from klea_utils.stores._ingest.store.fts5_corpus import Fts5IndexWriter
    from klea_utils.stores.retrieval.fts5_index import FTS5_FACET_KEYS
    from sci_etl_core.search import MetadataFilter
    from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store, built_facet_keys

    path = tmp_path / "index.sqlite"
    tagged = Document(
        id="a.md:0",
        page_content="Soil genes.",
        metadata={"file_name": "a.md", "tags": ["to-read"], "collections": ["Thesis"]},
    )
    Fts5IndexWriter(path, "papers", force=False).add("a.md", "h1", [tagged])
    old_keys = ("authors", "file_name", "journal", "keywords", "year")

    async def tag_only(keys: tuple[str, ...]) -> None:
        store = AsyncSqliteFts5Store(path, facet_keys=keys)
        try:
            await store.rebuild_tags()  # as an index written before tags/collections was
        finally:
            await store.aclose()

    asyncio.run(tag_only(old_keys))
    assert built_facet_keys(path) == old_keys

    Fts5IndexWriter(path, "papers", force=False).finish()
    assert set(built_facet_keys(path) or ()) == set(FTS5_FACET_KEYS)

    async def thesis() -> frozenset[str]:
        store = AsyncSqliteFts5Store(path, facet_keys=FTS5_FACET_KEYS)
        try:
            return await store.filter_ids(None, [MetadataFilter("collections", {"Thesis"})])
        finally:
            await store.aclose()

    assert asyncio.run(thesis()) == {"a.md:0"}
