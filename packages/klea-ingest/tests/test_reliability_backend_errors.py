"""A backend failing mid-run (full disk, read-only store) is one line naming the store and
the cause (issue 19, item 6)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from ingest_store_support import make_builder, write_source
from klea_utils.stores._ingest.store.backend_errors import describe_backend_failure
from klea_utils.stores.exceptions import StoreBackendError
from klea_utils.stores.store_writer import StoreWriter
from langchain_core.embeddings import DeterministicFakeEmbedding


class _FullDisk:
    """A real store whose writes fail as SQLite does on a full disk."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def add_documents(self, *args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_full_disk_is_one_line_naming_store_and_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = StoreWriter._open_store
    monkeypatch.setattr(
        StoreWriter, "_open_store", lambda self, uri, name: _FullDisk(real_open(self, uri, name))
    )
    source, store = tmp_path / "src", tmp_path / "store"
    results = [write_source(source, "a.md", ["a paragraph on dendrites"])]
    builder = make_builder(DeterministicFakeEmbedding(size=16))
    with pytest.raises(StoreBackendError) as caught:
        builder.store_all(iter(results), f"chroma:{store}", "papers", source)
    message = str(caught.value)
    assert message.startswith(f"store chroma:{store} collection 'papers': OperationalError")
    assert message.endswith("(the disk is full)")
    assert "\n" not in message


@pytest.mark.parametrize(
    ("error", "hint"),
    [
        (RuntimeError("attempt to write a readonly database"), "the store is read-only"),
        (RuntimeError("Error in compaction: Failed to apply logs"), "is the disk full"),
        (RuntimeError("something\n  else\n  entirely"), None),
    ],
)
def test_hints(error: Exception, hint: str | None) -> None:
    line = describe_backend_failure("chroma:/s", "c", error)
    assert "\n" not in line
    assert (hint in line) if hint else line.endswith("something else entirely")
