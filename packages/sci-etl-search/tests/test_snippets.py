"""snippet_window and passage_snippet."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sci_etl_core.search.filters import SNIPPET_ELLIPSIS, SNIPPET_TOKENS
from sci_etl_core.search.parser import parse_query
from sci_etl_core.search.snippets import passage_snippet, snippet_window
from sci_etl_core.search.tokenize import Unicode61Tokenizer

TOKENIZER = Unicode61Tokenizer()


def words_at(text: str, spans: tuple[tuple[int, int], ...]) -> list[str]:
    return [text[start:end] for start, end in spans]


def test_short_text_is_kept_whole() -> None:
    text = "  Dark matter, dark energy.  "
    tokens = TOKENIZER.tokens(text)
    window, spans = snippet_window(text, tokens, [(2, 3), (0, 1)])
    assert window == text
    assert words_at(window, spans) == ["Dark", "dark"]


def test_window_starts_at_first_range_and_marks_ellipses() -> None:
    words = [f"w{i}" for i in range(100)]
    text = " ".join(words)
    tokens = TOKENIZER.tokens(text)
    window, spans = snippet_window(text, tokens, [(50, 51), (40, 42)])
    assert window.startswith(SNIPPET_ELLIPSIS + "w40 w41")
    assert window.endswith(SNIPPET_ELLIPSIS)
    assert len(TOKENIZER.words(window)) == SNIPPET_TOKENS
    assert words_at(window, spans) == ["w40 w41", "w50"]


def test_window_near_the_end_starts_earlier() -> None:
    text = " ".join(f"w{i}" for i in range(100)) + "."
    tokens = TOKENIZER.tokens(text)
    window, spans = snippet_window(text, tokens, [(98, 99)])
    assert window.startswith(SNIPPET_ELLIPSIS)
    assert window.endswith("w99.")
    assert len(TOKENIZER.words(window)) == SNIPPET_TOKENS
    assert words_at(window, spans) == ["w98"]


def test_overlapping_ranges_merge() -> None:
    text = "a b c d"
    window, spans = snippet_window(text, TOKENIZER.tokens(text), [(0, 2), (1, 3), (3, 4)])
    assert spans == ((0, 5), (6, 7))
    assert window == text


def test_bad_ranges_are_refused() -> None:
    text = "a b"
    with pytest.raises(ValueError, match=r"token range \(1, 5\)"):
        snippet_window(text, TOKENIZER.tokens(text), [(1, 5)])
    with pytest.raises(ValueError, match="not inside"):
        snippet_window(text, TOKENIZER.tokens(text), [(1, 1)])


@given(
    st.lists(st.sampled_from(["alpha", "beta", "x", "Müller", ",", "--"]), max_size=80).map(
        " ".join
    ),
    st.data(),
)
def test_window_highlights_cover_whole_tokens(text: str, data: st.DataObject) -> None:
    tokens = TOKENIZER.tokens(text)
    ranges = []
    if tokens:
        ranges = data.draw(
            st.lists(
                st.integers(0, len(tokens) - 1).flatmap(
                    lambda s: st.tuples(st.just(s), st.integers(s + 1, min(len(tokens), s + 3)))
                ),
                max_size=5,
            )
        )
    window, spans = snippet_window(text, tokens, ranges)
    assert len(TOKENIZER.words(window)) <= SNIPPET_TOKENS
    previous = -1
    for start, end in spans:
        assert previous < start < end <= len(window)
        previous = end
        assert TOKENIZER.words(window[start:end])
    if ranges:
        first = min(start for start, _ in ranges)
        assert tokens[first].text in [t.text for t in TOKENIZER.tokens(window)]


def test_passage_snippet_highlights_every_positive_word() -> None:
    query = parse_query('dark OR "dwarf galaxy" -energy title:quasar NEAR(halo mass)')
    text = "Dark energy and a dwarf galaxy; quasar halo with no mass. Dark."
    snippet = passage_snippet(query, text)
    assert snippet.field == "body"
    assert words_at(snippet.text, snippet.highlights) == [
        "Dark",
        "dwarf galaxy",
        "halo",
        "mass",
        "Dark",
    ]
    titled = passage_snippet(query, text, "title")
    assert "quasar" in words_at(titled.text, titled.highlights)


def test_passage_snippet_without_highlight_is_the_start() -> None:
    text = " ".join(f"w{i}" for i in range(60))
    snippet = passage_snippet(parse_query("nothing"), text)
    assert snippet.highlights == ()
    assert snippet.text.startswith("w0 w1")
    assert snippet.text.endswith(SNIPPET_ELLIPSIS)


def test_passage_snippet_refuses_unknown_field() -> None:
    with pytest.raises(ValueError, match="'summary'"):
        passage_snippet(parse_query("x"), "x", "summary")
