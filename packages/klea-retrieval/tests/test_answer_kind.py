"""The kind of value a question asks for, and the passages that hold one."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._retrieval.answer_kind import asked_kind, holds_kind
from klea_utils.stores._retrieval.passage_focus import FocusParams, focus_rerank, focus_scores
from langchain_core.documents import Document


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What share of the documents are written in English?", "percent"),
        ("What percentage of pages are tables?", "percent"),
        ("How much money, in US dollars, was spent on the extension stage?", "money"),
        ("What price does the form give for a copy?", "money"),
        ("In which year does the story take place?", "year"),
        ("When was the standard first published?", "year"),
        ("How many traces does the benchmark form?", "number"),
        ("What exact-match score does the base model reach?", "number"),
        ("Who is the author of The Patent Wars?", None),
        ("Why are the recorded levels below zero?", None),
    ],
)
def test_the_kind_a_question_asks_for(question: str, kind: str | None) -> None:
    assert asked_kind(question) == kind


def test_which_passages_hold_a_value_of_each_kind() -> None:
    assert holds_kind("close to 95% of the documents", "percent")
    assert holds_kind("five per cent of them", "percent")
    assert not holds_kind("a percentage of them", "percent")
    assert holds_kind("in USD | $5.328M | $0.238M", "money")
    assert holds_kind("it cost 20 dollars", "money")
    assert not holds_kind("the dollar fell", "money")
    assert holds_kind("It was the year 1775.", "year")
    assert not holds_kind("line 12345 and page 12", "year")
    assert holds_kind("81 traces", "number")
    assert not holds_kind("many traces", "number")


@given(st.text(max_size=200))
def test_any_text_gets_a_kind_or_none_and_is_checked_without_error(text: str) -> None:
    kind = asked_kind(text)
    assert kind in (None, "percent", "money", "year", "number")
    for each in ("percent", "money", "year", "number"):
        assert isinstance(holds_kind(text, each), bool)


def test_the_passage_holding_the_asked_kind_goes_first_among_alike_passages() -> None:
    def part(text: str) -> Document:
        return Document(page_content=text, metadata={"file_name": "layout.pdf"})

    lead = part("The documents in the layout dataset were chosen from many sources.")
    answer = part("Of the documents in the dataset, close to 95% are in English.")
    merged = [(lead, 1.0), (answer, 0.97)]
    question = "What share of the documents in the layout dataset are in English?"
    assert focus_rerank(question, merged, FocusParams(answer_share=0.0))[0][0] is lead
    assert focus_rerank(question, merged, FocusParams())[0][0] is answer


def test_a_question_asking_for_no_kind_is_scored_without_it() -> None:
    texts = ["the author wrote 3 books", "the author wrote books"]
    question = "Who is the author of the books?"
    assert focus_scores(question, texts, FocusParams()) == focus_scores(
        question, texts, FocusParams(answer_share=0.0)
    )
