"""What kind of value a question asks for, and whether a passage holds one.

A question that asks "what share", "how much money" or "in which year" wants a value of a
kind (a percentage, a sum of money, a year, a number); a passage that holds none of that
kind cannot state the answer, however many of the question's words it repeats. This is
the expected-answer-type signal of question answering, read from the question's words
with a few English patterns; a question none of them fits asks for no kind, and nothing
changes for it.
"""

from __future__ import annotations

import re

__all__ = ["AnswerKind", "asked_kind", "holds_kind"]

AnswerKind = str
"""One of ``"percent"``, ``"money"``, ``"year"``, ``"number"``."""

_ASKED: tuple[tuple[AnswerKind, re.Pattern[str]], ...] = (
    (
        "percent",
        re.compile(
            r"\b(?:what|which) (?:share|percentage|proportion|fraction|percent)\b"
            r"|\bhow many percent\b",
            re.IGNORECASE,
        ),
    ),
    (
        "money",
        re.compile(
            r"\bhow much (?:money|did .{1,60} cost|does .{1,60} cost)\b"
            r"|\b(?:what|which) (?:price|cost|amount)\b|\bin (?:us )?dollars\b",
            re.IGNORECASE,
        ),
    ),
    (
        "year",
        re.compile(r"\b(?:what|which) year\b|\bwhen (?:was|were|did)\b", re.IGNORECASE),
    ),
    (
        "number",
        re.compile(
            r"\bhow (?:many|much|long|large|big|high|far|often)\b"
            r"|\b(?:what|which)(?: [\w-]+)? (?:number|score|value|size|length|count|rate)\b",
            re.IGNORECASE,
        ),
    ),
)
_HELD: dict[AnswerKind, re.Pattern[str]] = {
    "percent": re.compile(r"\d\s?%|\bper ?cent\b", re.IGNORECASE),
    "money": re.compile(r"[$€£¥]\s?\d|\d\s?(?:usd|eur|dollars?)\b", re.IGNORECASE),
    "year": re.compile(r"\b(?:1[5-9]|20)\d\d\b"),
    "number": re.compile(r"\d"),
}


def asked_kind(question: str) -> AnswerKind | None:
    """The kind of value ``question`` asks for (the first pattern that fits), or ``None``."""
    for kind, pattern in _ASKED:
        if pattern.search(question):
            return kind
    return None


def holds_kind(text: str, kind: AnswerKind) -> bool:
    """Whether ``text`` holds a value of ``kind`` (a figure with ``%``, a currency sign…)."""
    return _HELD[kind].search(text) is not None
