"""AsyncSearchIndexer over both stores."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sci_etl_core.ingest_protocol import MemoryIngestor
from sci_etl_core.search.index_async import AsyncSearchIndexer
from sci_etl_core.search.query import Term
from search_store_support import STORE_KINDS, make_store


@dataclass
class Record:
    record_id: str
    title: str = ""
    abstract: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_ingest_replaces_and_clears(kind: str, tmp_path: Path) -> None:
    store = make_store(kind, tmp_path)
    indexer = AsyncSearchIndexer(store)
    assert isinstance(indexer, MemoryIngestor)
    assert indexer.store is store
    record = Record("a", "Dwarf galaxies", "  ", {"year": 2020})
    assert await indexer.ingest(record, "Full text about halos.") == 1
    stored = (await store.get_documents(["a"]))["a"]
    assert (stored.title, stored.abstract, stored.body) == (
        "Dwarf galaxies",
        "",
        "Full text about halos.",
    )
    assert stored.metadata == {"year": 2020}
    assert await indexer.ingest(Record("a", "Quasars"), "") == 1
    assert await store.filter_ids(Term("halos")) == frozenset()
    assert await store.count() == 1
    assert await indexer.ingest(Record("a", " ", "\n"), "\t ") == 0
    assert await store.count() == 0
    assert await indexer.ingest(Record("never", ""), "") == 0
    await store.aclose()


async def test_indexer_never_closes_and_checks_types(tmp_path: Path) -> None:
    store = make_store("sqlite", tmp_path)
    indexer = AsyncSearchIndexer(store)
    await indexer.ingest(Record("a", "x"), "y")
    assert await store.count() == 1
    with pytest.raises(TypeError, match="record 'b': body must be a string"):
        await indexer.ingest(Record("b", "x"), None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="AsyncTextSearchStore"):
        AsyncSearchIndexer(object())  # type: ignore[arg-type]
    await store.aclose()
