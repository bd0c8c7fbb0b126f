"""SlidingWindowChunker: windows, overlap, and the round trip through merge_passages."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sci_etl_core.embeddings.chunking import DEFAULT_OVERLAP_WORDS, SlidingWindowChunker
from sci_etl_core.search.backfill_async import merge_passages

WORDS = st.lists(st.sampled_from(["a", "b", "dark", "matter", "halo", "Müller"]), max_size=60)


def test_defaults() -> None:
    chunker = SlidingWindowChunker()
    assert (chunker.chunk_words, chunker.overlap_words) == (350, DEFAULT_OVERLAP_WORDS)
    assert SlidingWindowChunker(chunk_words=40).overlap_words == 20
    assert SlidingWindowChunker(chunk_words=10, overlap_words=0).overlap_words == 0


def test_windows_overlap_and_end_at_the_last_word() -> None:
    chunker = SlidingWindowChunker(chunk_words=4, overlap_words=1)
    text = "w0 w1  w2\nw3 w4 w5 w6 w7 w8"
    assert chunker.chunk(text) == ["w0 w1 w2 w3", "w3 w4 w5 w6", "w6 w7 w8"]
    assert chunker.chunk("  \n ") == []
    assert chunker.chunk("one") == ["one"]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"chunk_words": 0}, ValueError, "chunk_words must be >= 1"),
        (
            {"chunk_words": 5, "overlap_words": 5},
            ValueError,
            "overlap_words must be >= 0 and < chunk_words",
        ),
        ({"overlap_words": -1}, ValueError, "overlap_words"),
        ({"chunk_words": 3.5}, TypeError, "chunk_words must be an int"),
        ({"overlap_words": True}, TypeError, "overlap_words must be an int"),
    ],
)
def test_validation(kwargs: dict[str, object], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        SlidingWindowChunker(**kwargs)  # type: ignore[arg-type]


def test_chunk_rejects_non_text() -> None:
    with pytest.raises(TypeError, match="text must be a string"):
        SlidingWindowChunker().chunk(None)  # type: ignore[arg-type]


@given(
    words=WORDS,
    chunk_words=st.integers(1, 12),
    overlap=st.integers(0, 11),
)
def test_merge_passages_restores_the_words(
    words: list[str], chunk_words: int, overlap: int
) -> None:
    overlap = min(overlap, chunk_words - 1)
    chunker = SlidingWindowChunker(chunk_words, overlap)
    passages = chunker.chunk(" ".join(words))
    assert all(len(p.split()) <= chunk_words for p in passages)
    assert merge_passages(passages, overlap) == " ".join(words)


@given(
    passages=st.lists(st.text(st.sampled_from("ab "), max_size=8), max_size=5),
    overlap=st.integers(0, 3),
)
def test_merge_passages_never_loses_a_foreign_passage(passages: list[str], overlap: int) -> None:
    merged = merge_passages(passages, overlap).split()
    total = sum(len(p.split()) for p in passages)
    first = len(passages[0].split()) if passages else 0
    assert total - overlap * max(len(passages) - 1, 0) <= len(merged) <= total
    assert merged[:first] == (passages[0].split() if passages else [])
