"""Chroma keeps every metadata value: what it cannot hold is encoded and decoded losslessly."""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._retrieval.chroma import (
    ENCODED_PREFIX,
    chroma_holds,
    decode_metadata,
    encode_metadata,
)
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.documents import Document
from retrieval_backends import HashEmbeddings

LOG = logging.getLogger("test")

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.sampled_from([ENCODED_PREFIX, ENCODED_PREFIX + "1"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(st.dictionaries(st.text(), json_values, max_size=5))
def test_encoding_round_trips_and_only_holdable_values_stay_plain(metadata: dict[str, Any]) -> None:
    encoded = encode_metadata(metadata)
    assert decode_metadata(encoded) == metadata
    for key, value in encoded.items():
        assert chroma_holds(value) or value.startswith(ENCODED_PREFIX)
        if chroma_holds(metadata[key]):
            assert value == metadata[key]


def test_what_chroma_holds() -> None:
    for value in ("", "x", True, 3, -(2**63), 1.5, ["a"], [1, 2], [0.5], [True]):
        assert chroma_holds(value), value
    for value in (None, {}, {"a": 1}, [], [1, "a"], [1, 2.0], [None], 2**63, math.inf, (1,)):
        assert not chroma_holds(value), value
    assert not chroma_holds(ENCODED_PREFIX + "x")  # would decode as something else


def test_a_chroma_store_gives_curated_metadata_back_unmodified(tmp_path: Path) -> None:
    # Seed: "researcher-curated keys pass through unmodified".
    curated = {
        "file_name": "a.pdf",
        "title": None,
        "editors": {"lead": "A. Sinha", "others": ["B", "C"]},
        "tags": [],
        "mixed": [1, "a"],
        "year": 2020,
        "keywords": ["x", "y"],
        "note": ENCODED_PREFIX + "looks encoded",
    }
    store = instantiate_vector_store(
        f"chroma:{tmp_path / 'chroma'}", "papers", HashEmbeddings(), LOG, create=True
    )
    store.add_documents([Document(page_content="dendrites", metadata=curated)], ids=["a.pdf:0"])
    ((doc, _),) = store.similarity_search_with_score("dendrites", k=1)
    assert doc.metadata == curated
    assert store.get_by_ids(["a.pdf:0"])[0].metadata == curated
    assert store.get(ids=["a.pdf:0"])["metadatas"] == [curated]
    # Filters on plain values still run natively.
    assert len(store.similarity_search("dendrites", k=1, filter={"year": 2020})) == 1
