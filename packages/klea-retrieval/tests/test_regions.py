"""A chunk's ``regions`` (its boxes on the page, issue 36) come back as a list everywhere.

Chroma keeps the list as a JSON string (flat metadata); the store, ``klea-retrieve``'s
JSON, klea-serve's passages and a widened hit all give the list back. Older stores
without ``regions`` and malformed values give an empty list, never an error.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._retrieval.chroma import ENCODED_PREFIX
from klea_utils.stores._retrieval.context import widen
from klea_utils.stores._retrieval.references import serialize_reference_material
from klea_utils.stores._retrieval.regions import join_regions, regions_of
from klea_utils.stores.retrieve_cli import _as_json
from klea_utils.stores.serve.papers.paper import display_metadata
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.documents import Document
from retrieval_backends import HashEmbeddings

LOG = logging.getLogger("test")

REGIONS = [
    {"page": 3, "bbox": [72.0, 700.5, 290.25, 711.0]},
    {"page": 4, "bbox": [72.0, 720.0, 288.0, 731.5]},
]


def _meta(index: int, regions: Any = None) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "file_name": "a.pdf",
        "file_hash": "h",
        "headings": ["Results"],
        "section_index": 0,
        "chunk_index": index,
        "page_start": 3,
        "page_end": 4,
    }
    if regions is not None:
        meta["regions"] = regions
    return meta


def test_regions_read_back_from_a_list_or_a_json_string() -> None:
    assert regions_of({"regions": REGIONS}) == REGIONS
    assert regions_of({"regions": json.dumps(REGIONS)}) == REGIONS
    assert regions_of({}) == []  # an older store, or a Markdown source


def test_malformed_regions_are_dropped_one_by_one() -> None:
    bad = [
        {"page": 0, "bbox": [0, 0, 1, 1]},
        {"page": True, "bbox": [0, 0, 1, 1]},
        {"page": 2, "bbox": [0, 0, 1]},
        {"page": 2, "bbox": [5, 0, 1, 1]},  # left past right
        {"page": 2, "bbox": [0, 0, "1", 1]},
        "page 2",
        REGIONS[0],
    ]
    assert regions_of({"regions": bad}) == [REGIONS[0]]
    assert regions_of({"regions": "{not json"}) == []
    assert regions_of({"regions": 7}) == []


@given(st.recursive(st.none() | st.integers() | st.floats() | st.text(), st.lists, max_leaves=12))
def test_any_value_reads_as_a_list_of_valid_regions(value: Any) -> None:
    for candidate in (value, json.dumps(value) if not isinstance(value, float) else value):
        regions = regions_of({"regions": candidate})
        assert isinstance(regions, list)
        for region in regions:
            assert region["page"] >= 1
            assert len(region["bbox"]) == 4


def test_join_keeps_reading_order_without_repeating_a_box() -> None:
    assert join_regions([{"regions": REGIONS[:1]}, {}, {"regions": REGIONS}]) == REGIONS


def test_a_chroma_store_gives_the_list_back(tmp_path: Path) -> None:
    store = instantiate_vector_store(
        f"chroma:{tmp_path / 'chroma'}", "papers", HashEmbeddings(), LOG, create=True
    )
    doc = Document(page_content="spiking neurons", metadata=_meta(0, REGIONS))
    store.add_documents([doc], ids=["a.pdf:0"])
    raw = store._collection.get(ids=["a.pdf:0"])["metadatas"][0]["regions"]
    assert isinstance(raw, str)
    assert raw.startswith(ENCODED_PREFIX)
    ((found, _),) = store.similarity_search_with_score("spiking", k=1)
    assert found.metadata["regions"] == REGIONS


def test_public_surfaces_give_the_list() -> None:
    stored_as_string = Document(page_content="x", metadata=_meta(0, json.dumps(REGIONS)))
    out = json.loads(_as_json({"papers": [(stored_as_string, 1.0)]}))
    assert out["papers"][0]["metadata"]["regions"] == REGIONS  # klea-retrieve --json
    assert display_metadata(stored_as_string.metadata)["regions"] == REGIONS  # klea-serve, MCP
    assert display_metadata(_meta(0))["regions"] == []  # an older store
    text = serialize_reference_material({"papers": [(stored_as_string, 1.0)]})
    assert "bbox" not in text  # boxes are for a viewer, not the answer LLM


def test_a_widened_hit_holds_the_regions_of_every_chunk_joined() -> None:
    first = Document(page_content="Results\nOne.", metadata=_meta(0, REGIONS[:1]))
    second = Document(page_content="Results\nTwo.", metadata=_meta(1, REGIONS[1:]))
    wide = widen(first, [first, second], "neighbours", 200)
    assert wide.metadata["regions"] == REGIONS


# -- page labels ---------------------------------------------------------------------------


def test_references_cite_the_printed_page_beside_the_physical_one() -> None:
    from klea_utils.stores._retrieval.references import page_label

    one = {"page_start": 7, "page_end": 7}
    assert page_label({**one, "page_label": "1234"}) == "p. 7 (printed 1234)"
    assert page_label({**one, "page_label": "7"}) == "p. 7"  # nothing more to say
    assert page_label(one) == "p. 7"  # an older store
    two = {"page_start": 7, "page_end": 8, "page_label": "1234-1235"}
    assert page_label(two) == "pp. 7-8 (printed 1234-1235)"
    doc = Document(page_content="x", metadata={**_meta(0), "page_label": "xii"})
    text = serialize_reference_material({"papers": [(doc, 1.0)]})
    assert "[pp. 3-4 (printed xii)]" in text
    assert "page_label" not in text


def test_serve_and_mcp_passages_carry_the_page_label() -> None:
    assert display_metadata({**_meta(0), "page_label": " 12 "})["page_label"] == "12"
    assert display_metadata(_meta(0))["page_label"] is None


def test_a_widened_hit_keeps_a_page_label_all_its_chunks_share() -> None:
    first = Document(page_content="Results\nOne.", metadata={**_meta(0), "page_label": "5"})
    second = Document(page_content="Results\nTwo.", metadata={**_meta(1), "page_label": "5"})
    assert widen(first, [first, second], "neighbours", 200).metadata["page_label"] == "5"
    other = Document(page_content="Results\nTwo.", metadata={**_meta(1), "page_label": "6"})
    assert "page_label" not in widen(first, [first, other], "neighbours", 200).metadata
