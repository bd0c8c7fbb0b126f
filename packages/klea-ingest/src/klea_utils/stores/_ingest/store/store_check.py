"""Checking that a vector store holds the chunk ids the manifest records.

A manifest can outlive its store (the store folder deleted, the collection dropped by hand,
a run against a copy): skipping a file because the manifest says it is stored would then
leave the collection silently empty. One id look-up per skipped file keeps the check cheap.
"""

from __future__ import annotations

from typing import Any


def missing_ids(store: Any, ids: list[str]) -> list[str]:
    """The ids of ``ids`` that ``store`` (a LangChain vector store) does not hold."""
    if not ids:
        return []
    present: set[str]
    if type(store).__module__.startswith("langchain_chroma"):
        got = store._collection.get(ids=ids, include=[])  # ids only: no documents, no vectors
        present = {str(i) for i in got["ids"]}
    else:
        present = {str(doc.id) for doc in store.get_by_ids(ids)}
    return [i for i in ids if i not in present]


def current_ids(store: Any, ids: list[str], file_hash: str) -> set[str]:
    """The ids of ``ids`` that ``store`` holds for this version (``file_hash``) of the file.

    A run killed in the middle of a large file left some of its chunks stored; the next
    run keeps those (their metadata names the same file hash) and embeds only the rest.
    """
    if not ids:
        return set()
    if type(store).__module__.startswith("langchain_chroma"):
        got = store._collection.get(ids=ids, include=["metadatas"])
        pairs = zip(got["ids"], got["metadatas"] or [], strict=False)
        return {str(i) for i, meta in pairs if (meta or {}).get("file_hash") == file_hash}
    return {
        str(doc.id)
        for doc in store.get_by_ids(ids)
        if (doc.metadata or {}).get("file_hash") == file_hash
    }
