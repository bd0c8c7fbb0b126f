"""A pickled BM25 corpus cannot run code: only Document and built-in values load (issue 19)."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores.config import BM25StoreInfo, PerDomainConfig, RetrieverConfig
from klea_utils.stores.exceptions import StoreBackendError
from klea_utils.stores.retrieval.bm25 import BM25RetrieverManager, read_corpus
from langchain_core.documents import Document


class _Planted:
    """Unpickling this opens (creates) ``marker``: proof that the file ran code."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def _hostile(path: Path, marker: Path, *, after_good_batch: bool = False) -> Path:
    with path.open("wb") as fh:
        if after_good_batch:
            pickle.dump([Document(page_content="fine", metadata={"file_name": "a.md"})], fh)
        pickle.dump([_Planted(marker)], fh)
    return path


@pytest.mark.parametrize("after_good_batch", [False, True])
def test_hostile_corpus_is_refused_without_running(tmp_path: Path, after_good_batch) -> None:
    marker = tmp_path / "ran"
    path = _hostile(tmp_path / "evil.pkl", marker, after_good_batch=after_good_batch)
    batch = 1 if after_good_batch else 0
    with pytest.raises(StoreBackendError, match=rf"evil\.pkl.*batch {batch}.*io\.open"):
        read_corpus(path)
    assert not marker.exists()


def test_retriever_refuses_a_hostile_corpus(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = _hostile(tmp_path / "evil.pkl", marker)
    config = RetrieverConfig(
        domains={"d": PerDomainConfig(bm25_stores=[BM25StoreInfo(name="p", path=str(path))])}
    )
    manager = BM25RetrieverManager(config, logging.getLogger("t"))
    manager.setup()
    with pytest.raises(StoreBackendError, match=r"evil\.pkl"):
        manager.retrieve("d", "anything")
    assert not marker.exists()


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
        | st.tuples(inner)
        | st.frozensets(st.integers(), max_size=3)
    ),
    max_leaves=10,
)


@given(
    metadata=st.dictionaries(st.text(max_size=8), _values, max_size=4), protocol=st.integers(0, 5)
)
def test_documents_with_built_in_metadata_load_at_every_protocol(metadata, protocol) -> None:
    import io

    from klea_utils.stores._retrieval.safe_pickle import safe_load

    doc = Document(page_content="text", metadata=metadata, id="a.md:0")
    loaded = safe_load(io.BytesIO(pickle.dumps([doc], protocol=protocol)))
    assert loaded == [doc]
