"""The query embedder behind a memo of its last questions (internal).

The vector leg embeds a question to search with it; re-scoring the fused pool by stored
vectors (:mod:`~klea_utils.stores._retrieval.pool_similarity`) needs the same vector.
:class:`QueryVectorMemo` keeps it, so a question is embedded once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from langchain_core.embeddings import Embeddings

__all__ = ["MEMO_SIZE", "QueryVectorMemo"]

MEMO_SIZE = 64
"""Questions whose embedding :class:`QueryVectorMemo` keeps."""


class QueryVectorMemo(Embeddings):
    """An ``Embeddings`` that remembers the vectors of the last questions it embedded.

    Documents are embedded by the wrapped model as they are; :meth:`embed_query` returns
    the vector computed before for the same text (a copy), so the vector leg and the
    re-scoring of its pool pay for one embedding. Safe to share between threads.
    """

    def __init__(self, model: Embeddings, size: int = MEMO_SIZE) -> None:
        self.model = model
        self.size = size
        self._vectors: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.model.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            known = self._vectors.get(text)
            if known is not None:
                self._vectors.move_to_end(text)
                return list(known)
        vector = [float(x) for x in self.model.embed_query(text)]
        with self._lock:
            self._vectors[text] = vector
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return list(vector)
