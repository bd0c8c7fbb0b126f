"""A Chroma store built by Klea finds the same neighbours in every process that opens it."""

from __future__ import annotations

import hashlib
import json
import logging
import subprocess
import sys

import numpy as np
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

_QUERY = """
import json, sys, chromadb
col = chromadb.PersistentClient(path=sys.argv[1]).get_collection("papers")
stored = col.get(include=["embeddings"], limit=40)
found = col.query(query_embeddings=[list(v) for v in stored["embeddings"]], n_results=30)
print(json.dumps(found["ids"]))
"""


class SpreadEmbeddings(Embeddings):
    """FAKE embeddings spread over 64 dimensions (a text's SHA-256 seeds its vector): near
    neighbours are as hard to tell apart as those of a real model's passages."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
        return [float(x) for x in np.random.default_rng(seed).standard_normal(64)]


def _neighbours(folder: str) -> list[list[str]]:
    run = subprocess.run(
        [sys.executable, "-c", _QUERY, folder], capture_output=True, text=True, check=True
    )
    ids: list[list[str]] = json.loads(run.stdout)
    return ids


def test_two_processes_find_the_same_neighbours(tmp_path) -> None:
    # 900 records written at once: with Chroma's defaults (sync at 1,000) they all stay in
    # its log, and each process that opened the store built its own graph of them
    docs = [
        Document(id=f"p{i // 30}.pdf:{i % 30}", page_content=f"passage {i} on topic {i % 17}")
        for i in range(900)
    ]
    store = instantiate_vector_store(
        f"chroma:{tmp_path}", "papers", SpreadEmbeddings(), logging.getLogger("test"), create=True
    )
    store.add_documents(docs, ids=[d.id for d in docs])
    first = _neighbours(str(tmp_path))
    assert len(first) == 40
    assert _neighbours(str(tmp_path)) == first
    assert _neighbours(str(tmp_path)) == first
