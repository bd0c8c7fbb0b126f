"""The sentence splitter and the segmenter that packs sentences into chunk-sized pieces.

Properties (hypothesis): pieces rejoin into the input; a cut never falls inside a number
or after a known abbreviation, an initial or an enumeration label; sentences built from
known parts come back one by one; segments fit their budget and keep every word, and
with overlap each segment after the first repeats only whole sentences of the one before.
Then sentences from the development papers, as pdfium reads them.
"""

from __future__ import annotations

import itertools
import logging
import re
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from klea_utils.stores._ingest.chunking.sentences import (
    ABBREVIATIONS,
    NUMBERED_ABBREVIATIONS,
    split_clauses,
    split_sentences,
)
from klea_utils.stores._ingest.chunking.text_segments import segment_text
from klea_utils.stores._ingest.chunking.token_counter import (
    TokenCounter,
    load_token_counter,
)
from klea_utils.stores.packaged_minilm import packaged_minilm_path


@cache
def _counter() -> TokenCounter:
    return load_token_counter(str(packaged_minilm_path()), logging.getLogger("test"))


ANY_TEXT = st.text(
    alphabet=st.sampled_from(list("ab A.B!?…;:,—-\n ()[]\"'”’3.5eE")) | st.characters(),
    max_size=300,
)


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_sentences_and_clauses_rejoin_into_the_input(text: str) -> None:
    sentences = split_sentences(text)
    assert "".join(sentences) == text
    assert all(s for s in sentences)
    for sentence in sentences:
        assert "".join(split_clauses(sentence)) == sentence


LOWER = st.sampled_from(
    ["model", "reads", "each", "page", "counts", "tokens", "heat", "flux", "entropy", "with"]
)
CAPITAL = st.sampled_from(["The", "We", "This", "Table", "DeepSeek", "Smith", "Zürich", "Our"])
NUMBER = st.sampled_from(["3.5", "0.25", "1e-3", "2,048", "128", "14.8T", "10^5"])


@st.composite
def sentence(draw: st.DrawFn) -> str:
    """A sentence with numbers, abbreviations, initials and brackets that must not end it."""
    words = [draw(CAPITAL)]
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["word", "word", "number", "abbrev", "numbered", "initial"]))
        if kind == "word":
            words.append(draw(LOWER))
        elif kind == "number":
            words.append(draw(NUMBER))
        elif kind == "abbrev":
            abbreviation = draw(st.sampled_from(sorted(ABBREVIATIONS)))
            words += [f"{abbreviation.capitalize()}.", draw(CAPITAL | NUMBER | st.just("(3)"))]
        elif kind == "numbered":
            words += [f"{draw(st.sampled_from(sorted(NUMBERED_ABBREVIATIONS)))}.", draw(NUMBER)]
        else:
            words += [f"{draw(st.sampled_from('JARS'))}.", draw(CAPITAL)]
    end = draw(st.sampled_from([".", "?", "!", "...", '."', ".)", ".”", "?]"]))
    return " ".join(words) + end


@settings(max_examples=120, deadline=None)
@given(st.lists(sentence(), min_size=1, max_size=6), st.sampled_from([" ", "  ", " \t"]))
def test_sentences_come_back_one_by_one(sentences: list[str], gap: str) -> None:
    text = gap.join(sentences)
    assert [s.rstrip() for s in split_sentences(text)] == sentences


@settings(max_examples=100, deadline=None)
@given(st.lists(sentence(), min_size=1, max_size=6))
def test_no_cut_inside_a_number_or_after_an_abbreviation(sentences: list[str]) -> None:
    text = " ".join(sentences)
    pieces = split_sentences(text)
    cut = 0
    for piece in pieces[:-1]:
        cut += len(piece)
        assert text[cut - 1].isspace()  # so never inside "3.5" or "2,048"
        last = piece.split()[-1]
        assert last.rstrip(".").lower() not in ABBREVIATIONS | NUMBERED_ABBREVIATIONS
        assert not re.fullmatch(r"[JARS]\.", last)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(sentence(), min_size=1, max_size=12),
    st.integers(8, 80),
    st.integers(0, 2),
)
def test_segments_fit_keep_every_word_and_overlap_whole_sentences(
    sentences: list[str], room: int, overlap: int
) -> None:
    text = " ".join(sentences)
    count = _counter().count
    segments = segment_text(text, room, count, overlap=overlap)
    assert all(count(s) <= room for s in segments)
    if overlap == 0:
        assert " ".join(segments).split() == text.split()
    else:
        words = text.split()
        assert (
            " ".join(segments).split()[: len(segments[0].split())]
            == words[: len(segments[0].split())]
        )
        assert set(" ".join(segments).split()) == set(words)
    if all(count(s) <= room for s in sentences):  # no sentence needs cutting: none is cut
        for segment in segments:
            assert segment.endswith((".", "?", "!", '"', ")", "”", "]"))


def test_overlap_repeats_the_last_sentence_of_the_piece_before() -> None:
    text = " ".join(f"Sentence number {n} says a thing about heat." for n in range(1, 9))
    count = _counter().count
    plain = segment_text(text, 30, count)
    overlapped = segment_text(text, 30, count, overlap=1)
    assert len(plain) >= 3
    for before, after in itertools.pairwise(overlapped):
        last = split_sentences(before)[-1].strip()
        assert after.startswith(last)


def test_a_sentence_over_the_budget_is_cut_at_clauses_then_words() -> None:
    sentence_text = (
        "The intra-node interconnect provides 160 GB/s, about 3.2 times the bandwidth of "
        "the cross-node link; so tokens are routed to at most four nodes, which keeps the "
        "traffic low."
    )
    count = _counter().count
    pieces = segment_text(sentence_text, 25, count)
    assert pieces[0].endswith("160 GB/s,")
    assert all(count(p) <= 25 for p in pieces)
    words = segment_text("word " * 40, 7, count)
    assert all(count(p) <= 7 for p in words)
    assert len(words) == 6
    long = segment_text("x" * 500, 10, count)
    assert "".join(long) == "x" * 500


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # d11-like: a long sentence with a comma; "et al." and "Fig." inside
            "Following Dai et al. (2024), we adopt 256 routed experts, as shown in Fig. 2. "
            "Each token is sent to 8 of them.",
            [
                "Following Dai et al. (2024), we adopt 256 routed experts, as shown in Fig. 2. ",
                "Each token is sent to 8 of them.",
            ],
        ),
        (
            "The recorded levels are below zero, i.e. negative, cf. Eq. (12). See Sec. 3.1 "
            "for details. Ref. [4] gives the proof.",
            [
                "The recorded levels are below zero, i.e. negative, cf. Eq. (12). ",
                "See Sec. 3.1 for details. ",
                "Ref. [4] gives the proof.",
            ],
        ),
        (
            "H. Buhrman, R. Cleve and A. Wigderson. Quantum vs. classical communication and "
            "computation. In Proc. 30th STOC, pp. 63-68, 1998.",
            [
                "H. Buhrman, R. Cleve and A. Wigderson. ",
                "Quantum vs. classical communication and computation. ",
                "In Proc. 30th STOC, pp. 63-68, 1998.",
            ],
        ),
        (
            "The water residence time is 3.5 d... Then we stop. Values (e.g. 0.25) hold.",
            ["The water residence time is 3.5 d... ", "Then we stop. ", "Values (e.g. 0.25) hold."],
        ),
        (
            'He called it "the word processor." It spread. (This is a remark.) Next.',
            ['He called it "the word processor." ', "It spread. ", "(This is a remark.) ", "Next."],
        ),
        (
            "1. Introduction of the model. (a) First item.\nA new paragraph.",
            ["1. Introduction of the model. ", "(a) First item.\n", "A new paragraph."],
        ),
        (
            "Theorem 2.3. Let X be a manifold. Then X is compact.",
            ["Theorem 2.3. ", "Let X be a manifold. ", "Then X is compact."],
        ),
    ],
)
def test_sentences_of_real_papers(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_segment_text_refuses_an_empty_budget_or_a_negative_overlap() -> None:
    with pytest.raises(ValueError, match="room must be >= 1"):
        segment_text("text", 0, len)
    with pytest.raises(ValueError, match="overlap must be >= 0"):
        segment_text("text", 5, len, overlap=-1)
