"""F-ligatures in ASCII punctuation slots of fonts without a Unicode map (issue 15).

DocLayNet's page 3 (a publisher font) draws ``ff`` as ``#``, ``fi`` as ``"``, ``fl`` as
``$`` and ``ffi`` as ``!``; about 30 of its 899 words were lost, by us and by the raw text
layer. The repair votes per font with a vocabulary of known words; the synthetic tests pin
the vote, and that ordinary punctuation is left alone.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline
from klea_utils.stores._ingest.pdf.pdf_chars import PdfChar
from klea_utils.stores._ingest.pdf.pdf_ligatures import LIGATURES, repair_ligatures, vote
from realpapers import DATA, needs_data

pytestmark = pytest.mark.timeout(600)


@cache
def _page_text(name: str) -> str:
    assert DATA is not None
    doc, _ = convert_pdf_offline(DATA / name, do_ocr=False)
    text = "\n".join(item.text for item, _ in doc.iterate_items() if hasattr(item, "text"))
    return " ".join(text.split())


@needs_data
def test_doclaynet_ligature_slots_read_as_ligatures() -> None:
    text = _page_text("2206.01062_doclaynet_p3.pdf")
    for word in (
        "as different government websites",
        "tables, figures, plots",
        "company-specific, artistic",
        "On the flip side",
        "introduce difficulties in annotation",
        "Manuals, Scientific Articles",
        "tion staff and performed",
        "the first and most obvious",
        "avoid overfitting",
        "by their matching filenames",
    ):
        assert word.lower() in text.lower(), word
    for broken in ("di#erent", '"gures', 'speci"c', "$ip", "di!culties", "Scienti!c", "sta#"):
        assert broken not in text
    assert 'in the wild".' in text  # a real quote in another font stays


def _chars(words: list[str], face: int = 1, x: float = 0.0) -> list[Any]:
    """Glyphs of ``words`` in one font, a generated blank between words."""
    out: list[Any] = []
    for word in words:
        for ch in word:
            out.append(PdfChar(ch, x, x + 5, 100, 90, 10, 0, face))
            x += 5
        out.append(PdfChar(" ", 0, 0, 0, 0, 0, -1))
        x += 3
    return out


def _text(chars: list[Any]) -> str:
    return "".join(c.text for c in chars if c.font != -1 or c.text == " ").strip()


def test_a_font_with_ligatures_in_punctuation_slots_is_repaired() -> None:
    chars = _chars(["The", "di#erent", '"les', "and", '"gures', "o#er", 'speci"c', "e#ects."])
    repair_ligatures(chars)
    assert _text(chars) == "The different files and figures offer specific effects."


def test_a_slot_seen_once_is_adopted_when_the_page_uses_ligature_slots() -> None:
    chars = _chars(["di#erent", "o#ers", "di!culties", "on", "the", "$ip", "side"])
    chars += _chars(["Scienti!c", "Articles"], face=2, x=500)
    repair_ligatures(chars)
    assert _text(chars) == "different offers difficulties on the flip side Scientific Articles"


def test_ordinary_punctuation_is_left_alone() -> None:
    words = ['"quoted"', "text,", "Yahoo!", "it's", "well-known", "e.g.", '"the', 'end"', "x-axis"]
    words += ["(X", "(a)", "(s,", "[LL]", "(op)", "=X"]  # "fix", "fia", "fill", "flop" are words
    chars = _chars(words)
    # another font on the page does use ligature slots
    chars += _chars(["di#erent", "o#er", "e#ect"], face=2, x=500)
    repair_ligatures(chars)
    assert _text(chars) == " ".join(words) + " different offer effect"


def test_the_vote_needs_clear_evidence() -> None:
    assert vote(["di#erent", "o#er"], "#") == "ff"
    assert vote(["di#erent"], "#") is None  # one word is not enough on its own
    assert vote(["di#erent"], "#", min_words=1) == "ff"
    # a slot that also reads as punctuation in known words is not a ligature
    assert vote(["di#erent", "o#er", "one#two", "red#blue", "cat#dog"], "#") is None
    # two ligatures that each make one word known: no verdict
    assert vote(['"x'], '"', known=lambda w: w in ("ffx", "fix"), min_words=1) is None


_POOL = ["di#erent", '"les', "o#er", '"gures', "Yahoo!", '"quoted"', "it's", "e.g.", "$ip", "a!b"]


@given(
    st.lists(
        st.tuples(
            st.one_of(st.sampled_from(_POOL), st.text("abf#!\"$-'.", min_size=1, max_size=8)),
            st.integers(1, 3),
        ),
        max_size=30,
    )
)
def test_repairing_ligatures_never_loses_a_letter(words: list[tuple[str, int]]) -> None:
    chars: list[Any] = []
    for word, face in words:
        chars += _chars([word], face=face, x=10.0 * len(chars))
    before = [replace(c) for c in chars]
    repair_ligatures(chars)
    for old, new in zip(before, chars, strict=True):
        assert new.text == old.text or (old.text in "#!\"$-'." and new.text in LIGATURES)
