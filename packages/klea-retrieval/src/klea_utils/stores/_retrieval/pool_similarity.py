"""How close each pooled passage's stored vector lies to the question's (internal).

Passage focus (:mod:`~klea_utils.stores._retrieval.passage_focus`) reads words: a passage
that says the answer in other words than the question ("negative values" for "below
zero") loses to a neighbour that repeats the question's words. The vector store already
holds a vector for every passage of the pool, whichever leg found it, and the vector leg
has already embedded the question: the cosine between the two is a semantic signal that
costs one read by id and a few dot products, no model at query time.

- :class:`~klea_utils.stores._retrieval.query_memo.QueryVectorMemo` wraps the query
  embedder, so the vector leg's embedding of a question is not computed again.
- :func:`chunk_id` is the id ``build`` gives a chunk in every store
  (``<file_name>:<chunk_index>``).
- :func:`pool_similarities` reads the pool's stored vectors from the domain's vector
  stores (Chroma, Qdrant, PGVector) and returns each passage's cosine to the question,
  ``None`` for a passage no store holds a vector for.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from typing import Any

from klea_utils.stores._retrieval.vector_reads import vector_reader
from langchain_core.documents import Document

__all__ = ["chunk_id", "cosine", "pool_similarities"]

_CHUNK_ID = re.compile(r"^.+:\d+$")
_LOG = logging.getLogger(__name__)


def chunk_id(doc: Document) -> str | None:
    """The chunk's id in the stores: its own ``id``, else ``<file_name>:<chunk_index>``."""
    if isinstance(doc.id, str) and _CHUNK_ID.match(doc.id):
        return doc.id
    name, index = doc.metadata.get("file_name"), doc.metadata.get("chunk_index")
    if isinstance(name, str) and name and isinstance(index, int) and not isinstance(index, bool):
        return f"{name}:{index}"
    return None


def cosine(a: Sequence[float], b: Sequence[float]) -> float | None:
    """The cosine of two vectors; ``None`` when their lengths differ or one is zero."""
    if len(a) != len(b):
        return None
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norms if norms else None


def pool_similarities(
    query_vector: Sequence[float], docs: Sequence[Document], stores: Sequence[Any]
) -> list[float | None]:
    """Each document's cosine to ``query_vector``, from the vectors ``stores`` hold.

    The stores (LangChain Chroma, Qdrant or PGVector stores klea opened) are read in
    order, each for the ids the ones before it did not have. A store that cannot be read
    is logged and passed over: the passages it would have scored get ``None``, and the
    focus of those passages stays lexical.
    """
    ids = [chunk_id(doc) for doc in docs]
    vectors: dict[str, list[float]] = {}
    for store in stores:
        missing = sorted({i for i in ids if i is not None and i not in vectors})
        if not missing:
            break
        try:
            vectors.update(vector_reader(store).vectors(missing))
        except Exception as exc:  # the re-scoring degrades to lexical, the query answers
            _LOG.warning("stored vectors could not be read for re-scoring: %s", exc)
    return [
        cosine(query_vector, vectors[i]) if i is not None and i in vectors else None for i in ids
    ]
