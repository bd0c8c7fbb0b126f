"""Author fields split into people and written as display names (``nameparser`` inside)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.biblio.name_parsing import display_name, is_initials, split_people


@pytest.mark.parametrize(
    ("field", "people"),
    [
        ("Sinha, Ankur", ["Ankur Sinha"]),
        ("Ankur Sinha; Padraig Gleeson", ["Ankur Sinha", "Padraig Gleeson"]),
        ("Sinha, Ankur; Gleeson, Padraig", ["Ankur Sinha", "Padraig Gleeson"]),
        ("Sinha, Ankur and Gleeson, Padraig", ["Ankur Sinha", "Padraig Gleeson"]),
        ("Smith, J. R., Doe, K.", ["J. R. Smith", "K. Doe"]),
        ("van der Berg, Jan", ["Jan van der Berg"]),
        ("de la Cruz, Maria", ["Maria de la Cruz"]),
        ("Smith, Jr., John", ["John Smith Jr."]),
        ("Smith, John, Jr.", ["John Smith Jr."]),
        ("John Smith, Jr.", ["John Smith Jr."]),
        ("Walter Gary Sharp, Sr.", ["Walter Gary Sharp Sr."]),
        ("Ana Ortiz, Liam Chen", ["Ana Ortiz", "Liam Chen"]),
        ("Wei Li, Jun Wang, and Tao Chen", ["Wei Li", "Jun Wang", "Tao Chen"]),
        ("A. Einstein & B. Podolsky & N. Rosen", ["A. Einstein", "B. Podolsky", "N. Rosen"]),
        ("Prof. Dr. Jane Roe", ["Jane Roe"]),
        ("Ludwig van Beethoven", ["Ludwig van Beethoven"]),
        ("DeepSeek-AI", ["DeepSeek-AI"]),
        ("", []),
        (" ; , ", []),
    ],
)
def test_author_fields_split_into_display_names(field: str, people: list[str]) -> None:
    assert split_people(field) == people


def test_initials_need_their_dots() -> None:
    assert all(is_initials(text) for text in ("J.", "J. R.", "J.-P."))
    assert not any(is_initials(text) for text in ("UK", "Li", "JR", ""))


GIVEN = st.sampled_from(["Ankur", "Maria", "Jan", "Kofi", "J.", "J. R.", "Hana"])
PARTICLE = st.sampled_from(["", "van", "de", "von", "van der", "de la"])
SURNAME = st.sampled_from(["Sinha", "Berg", "Cruz", "Mensah", "Okafor", "Gleeson"])
SUFFIX = st.sampled_from(["", "Jr.", "III"])


@st.composite
def people(draw: st.DrawFn) -> tuple[str, str, str, str]:
    return draw(GIVEN), draw(PARTICLE), draw(SURNAME), draw(SUFFIX)


def _display(given: str, particle: str, surname: str, suffix: str) -> str:
    return " ".join(x for x in (given, particle, surname, suffix) if x)


def _inverted(given: str, particle: str, surname: str, suffix: str) -> str:
    last = " ".join(x for x in (particle, surname) if x)
    return f"{last}, {suffix}, {given}" if suffix else f"{last}, {given}"


@given(people())
def test_the_inverted_order_reads_as_the_display_order(person: tuple[str, str, str, str]) -> None:
    shown = _display(*person)
    assert display_name(_inverted(*person)) == shown
    assert display_name(shown) == shown
    assert display_name(display_name(_inverted(*person))) == shown


@given(st.lists(people(), min_size=1, max_size=5), st.sampled_from(["; ", " and "]))
def test_a_list_of_inverted_names_splits_back(
    persons: list[tuple[str, str, str, str]], separator: str
) -> None:
    field = separator.join(_inverted(*p) for p in persons)
    assert split_people(field) == [_display(*p) for p in persons]


@given(st.lists(people(), min_size=1, max_size=5), st.sampled_from(["; ", " and ", ", "]))
def test_a_list_of_display_names_splits_back(
    persons: list[tuple[str, str, str, str]], separator: str
) -> None:
    field = separator.join(_display(*p) for p in persons)
    expected = [_display(*p) for p in persons]
    if separator == ", ":
        # "John Smith, Jr." is one person: a suffix after a comma joins the name before.
        field = separator.join(_display(*p[:3], "") for p in persons)
        expected = [_display(*p[:3], "") for p in persons]
    assert split_people(field) == expected
