"""StoreURI: the one parser of store locations, and every caller raising its error."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._retrieval.store_paths import local_store_path
from klea_utils.stores.config import BM25StoreInfo, VectorStoreInfo
from klea_utils.stores.exceptions import StoreConfigError
from klea_utils.stores.filters import translate_metadata_filter, translation_is_exact
from klea_utils.stores.store_uri import VECTOR_SCHEMES, StoreURI
from klea_utils.stores.utils import check_store_target, drop_collection, instantiate_vector_store
from pydantic import ValidationError

locations = st.text(min_size=1).filter(lambda t: t.strip())


@given(st.sampled_from(VECTOR_SCHEMES), locations)
def test_vector_uris_parse_and_print_back(scheme, location):
    uri = StoreURI.vector(f"{scheme}:{location}")
    assert (uri.scheme, uri.location) == (scheme, location)
    assert str(uri) == f"{scheme}:{location}"
    assert uri.with_location("/elsewhere") == StoreURI.vector(f"{scheme}:/elsewhere")


@given(st.text().filter(lambda t: ":" not in t))
def test_a_vector_uri_without_a_colon_has_no_scheme(text):
    with pytest.raises(StoreConfigError, match="has no scheme"):
        StoreURI.vector(text)


@given(st.text(alphabet=st.characters(blacklist_characters=":"), min_size=1), locations)
def test_unknown_schemes_are_named(scheme, location):
    if scheme in VECTOR_SCHEMES:
        return
    with pytest.raises(StoreConfigError, match="unknown scheme"):
        StoreURI.vector(f"{scheme}:{location}")


@pytest.mark.parametrize("text", ["chroma:", "qdrant:  ", "pgvector:"])
def test_an_empty_location_is_refused(text):
    with pytest.raises(StoreConfigError, match="empty location"):
        StoreURI.vector(text)


@given(locations)
def test_bm25_paths_are_fts5_or_bare(location):
    fts5 = StoreURI.bm25(f"fts5:{location}")
    assert (fts5.scheme, fts5.location, str(fts5)) == ("fts5", location, f"fts5:{location}")
    if not location.startswith("fts5:"):
        bare = StoreURI.bm25(location)
        assert (bare.scheme, bare.location, str(bare)) == ("", location, location)


@pytest.mark.parametrize("text", ["", "  ", "fts5:", "fts5: "])
def test_an_empty_bm25_path_is_refused(text):
    with pytest.raises(StoreConfigError):
        StoreURI.bm25(text)


@pytest.mark.parametrize(
    ("text", "local"),
    [
        ("chroma:stores/c", Path("stores/c")),
        ("qdrant:/data/q", Path("/data/q")),
        ("qdrant:http://localhost:6333", None),
        ("qdrant:https://q.example", None),
        ("pgvector:postgresql://h/db", None),
    ],
)
def test_local_path_is_none_for_servers(text, local):
    uri = StoreURI.vector(text)
    assert uri.local_path == local
    assert uri.is_remote is (local is None)
    assert local_store_path(text, vector=True) == (None if local is None else (uri.prefix, local))


def test_the_value_validates_itself():
    with pytest.raises(StoreConfigError, match="unknown store scheme"):
        StoreURI("faiss", "/x")  # type: ignore[arg-type]
    with pytest.raises(StoreConfigError, match="empty location"):
        StoreURI("fts5", " ")


@pytest.mark.parametrize("bad", ["no-scheme", "faiss:/x", "chroma:", ":x"])
def test_every_caller_raises_store_config_error_for_a_bad_uri(bad):
    calls = [
        lambda: check_store_target(bad, "papers"),
        lambda: translate_metadata_filter(bad, {"year": 2020}),
        lambda: translation_is_exact(bad, {"year": 2020}),
        lambda: drop_collection(None, bad, "papers"),
        lambda: instantiate_vector_store(bad, "papers", None, logging.getLogger("t")),
    ]
    for call in calls:
        with pytest.raises(StoreConfigError, match=r"scheme|location"):
            call()
    with pytest.raises(ValidationError, match=r"scheme|location"):
        VectorStoreInfo(name="v", path=bad)


def test_bm25_store_info_refuses_an_empty_fts5_path():
    with pytest.raises(ValidationError, match="fts5:PATH"):
        BM25StoreInfo(name="b", path="fts5:")
