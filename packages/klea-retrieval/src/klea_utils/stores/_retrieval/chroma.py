"""A Chroma store that keeps every metadata value, encoding what Chroma cannot hold (internal).

Chroma holds a metadata value only when it is a string, a bool, a 64-bit int, a finite
float, or a non-empty list of one of those types; it refuses ``None``, nested objects,
empty and mixed lists, and silently changes NaN and huge ints. Researcher-curated
metadata can hold any of those, and ingestion stores it unmodified, so :class:`KleaChroma`
writes such a value as a string, :data:`ENCODED_PREFIX` followed by its JSON, and turns
it back into the value on every read. A string that happens to start with the prefix is
encoded too, so decoding is exact. Needs the ``chroma`` extra.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_chroma import Chroma
from langchain_core.documents import Document

__all__ = ["ENCODED_PREFIX", "KleaChroma", "chroma_holds", "decode_metadata", "encode_metadata"]

ENCODED_PREFIX = "klea-json:"
"""Marks a metadata string that holds the JSON of a value Chroma cannot store."""

_INT64 = range(-(2**63), 2**63)
_SCALARS = (str, bool, int, float)


def _scalar_holds(value: Any) -> bool:
    if isinstance(value, bool | str):
        return True
    if isinstance(value, int):
        return value in _INT64
    return isinstance(value, float) and math.isfinite(value)


def chroma_holds(value: Any) -> bool:
    """Whether Chroma stores ``value`` as it is and gives the same value back."""
    if isinstance(value, str):
        return not value.startswith(ENCODED_PREFIX)
    if isinstance(value, list):
        kinds = {type(item) for item in value}
        return (
            len(kinds) == 1
            and kinds <= set(_SCALARS)
            and all(_scalar_holds(item) and chroma_holds(item) for item in value)
        )
    return isinstance(value, _SCALARS) and _scalar_holds(value)


def encode_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """``metadata`` with every value Chroma cannot hold as ``ENCODED_PREFIX + JSON``."""
    return {
        key: value
        if chroma_holds(value)
        else ENCODED_PREFIX + json.dumps(value, ensure_ascii=False, default=str)
        for key, value in metadata.items()
    }


def decode_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`encode_metadata`."""
    return {
        key: json.loads(value[len(ENCODED_PREFIX) :])
        if isinstance(value, str) and value.startswith(ENCODED_PREFIX)
        else value
        for key, value in metadata.items()
    }


def _decoded(doc: Document) -> Document:
    return doc.model_copy(update={"metadata": decode_metadata(doc.metadata)})


class KleaChroma(Chroma):
    """``langchain_chroma.Chroma`` that stores any metadata value and reads it back."""

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        encoded = None if metadatas is None else [encode_metadata(m) for m in metadatas]
        return super().add_texts(texts, metadatas=encoded, ids=ids, **kwargs)

    def update_documents(self, ids: list[str], documents: list[Document]) -> None:
        encoded = [
            doc.model_copy(update={"metadata": encode_metadata(doc.metadata)}) for doc in documents
        ]
        super().update_documents(ids, encoded)

    def similarity_search_with_score(
        self, *args: Any, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        pairs = super().similarity_search_with_score(*args, **kwargs)
        return [(_decoded(doc), score) for doc, score in pairs]

    def similarity_search_by_vector(self, *args: Any, **kwargs: Any) -> list[Document]:
        return [_decoded(doc) for doc in super().similarity_search_by_vector(*args, **kwargs)]

    def similarity_search_by_vector_with_relevance_scores(
        self, *args: Any, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        pairs = super().similarity_search_by_vector_with_relevance_scores(*args, **kwargs)
        return [(_decoded(doc), score) for doc, score in pairs]

    def similarity_search_with_vectors(
        self, *args: Any, **kwargs: Any
    ) -> list[tuple[Document, Any]]:
        pairs = super().similarity_search_with_vectors(*args, **kwargs)
        return [(_decoded(doc), vector) for doc, vector in pairs]

    def max_marginal_relevance_search_by_vector(self, *args: Any, **kwargs: Any) -> list[Document]:
        found = super().max_marginal_relevance_search_by_vector(*args, **kwargs)
        return [_decoded(doc) for doc in found]

    def get(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        # get_by_ids reads through get, so it is decoded here once.
        result = dict(super().get(*args, **kwargs))
        if result.get("metadatas"):
            result["metadatas"] = [
                None if m is None else decode_metadata(m) for m in result["metadatas"]
            ]
        return result
