"""Chunks that are a paper's reference list step back unless the question asks for one.

A reference list is dense with titles on every topic its paper cites, so its chunks match
the words of unrelated questions (an embedding of forty titles sits near many topics;
BM25 finds the rare words of a cited title) and push the passages that answer out of the
top places. The build parses the entries of each list (``citations`` in the stores
configuration, ``klea-retrieve --references-of``, ``/api/papers/{file}/citations``), so
the list's text is not needed as a passage to find a cited paper.

A chunk is a reference list when a heading of its chain (metadata ``headings``), its own
or one it sits under, is a list's heading: "References", "Bibliography", "Literature
Cited", "Works Cited", "Normative references", "Annex C: Selected Bibliography", numbered
or not; a section about references ("Reference counting", "Cross-reference table", "DCT
references") is not one.

For a question that does not ask for a list, a file's reference-list chunks go behind its
other passages (the file keeps the places the fusion gave it: the right paper found by
its list still comes first, now with another of its passages), and a file found only by
its reference list gives its places up to every other file. A question that names the
list ("listed in the references", "the bibliography") asks for it: its chunks, and the
passages that read as reference entries whatever their heading says (dense in years and
marks such as "pp.", "Vol.", "Proc.": a bibliography's sections whose heading chain lost
the "Bibliography" above them, endnotes), then come first among those of their file, and
no file moves. The places keep their scores; only the passages move, so the cut to the
caller's ``k`` then leaves reference lists out where enough other passages were found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from klea_utils.stores._retrieval.passage_focus import file_key
from langchain_core.documents import Document

__all__ = [
    "asks_for_reference_list",
    "is_reference_list",
    "reads_as_entries",
    "settle_reference_lists",
]

_LIST_HEADING = re.compile(
    r"(?:(?:section|chapter|annex|appendix)\s+)?(?:[\dA-Z]{1,4}(?:\.\d+)*[.:]?\s+)?"
    r"(?:(?:selected|general|normative|additional|further|other)\s+)?"
    r"(?:references?(?:\s+and\s+notes)?|bibliography|literature\s+cited|works\s+cited"
    r"|cited\s+literature|reference\s+list)",
    re.IGNORECASE,
)
"""A reference list's own heading, after an optional section number ("6.", "SECTION 6",
"Annex C:", "M.1") and a qualifier ("Selected Bibliography", "Normative references")."""

_YEAR = re.compile(r"\b(?:1[6-9]\d\d|20\d\d)[a-z]?\b")
_ENTRY_MARK = re.compile(
    r"\b(?:pp?\.|vol\.|no\.|proc\.|proceedings|journal|conference|press|eds?\.|in:"
    r"|et al\.?|doi|arxiv|trans\.)",
    re.IGNORECASE,
)
_ENTRY_DENSITY = 0.06
"""Years and bibliographic marks ("pp.", "Vol.", "Proc.", "et al.") per word of a passage
that reads as reference entries (one entry of 30 words holds 4; prose citing a paper
or two, under 0.02)."""

_ASKS = re.compile(
    r"\b(?:references?\s+(?:list|section)|(?:in|from|of)\s+(?:the|its|their)\s+"
    r"(?:list\s+of\s+)?references|bibliography|reference\s+list|works\s+cited)\b",
    re.IGNORECASE,
)


def is_reference_list(doc: Document) -> bool:
    """Whether a heading of ``doc``'s chain (metadata ``headings``) heads a reference
    list: its own, or one it sits under ("Annex M" > "Bibliography" > "M.5 Huffman coding
    references")."""
    headings = doc.metadata.get("headings")
    if not isinstance(headings, list):
        return False
    return any(_LIST_HEADING.fullmatch(" ".join(str(h).split())) for h in headings)


def reads_as_entries(doc: Document) -> bool:
    """Whether ``doc``'s text reads as reference entries (dense in years and marks such as
    "pp.", "Vol.", "Proc."), whatever its heading says."""
    text = doc.page_content
    words = len(text.split())
    years = len(_YEAR.findall(text))
    marks = len(_ENTRY_MARK.findall(text))
    return years >= 1 and marks >= 1 and years + marks >= _ENTRY_DENSITY * words


def asks_for_reference_list(question: str) -> bool:
    """Whether ``question`` names a reference list ("listed in the references")."""
    return _ASKS.search(question) is not None


def settle_reference_lists(
    question: str, ranked: Sequence[tuple[Document, float]]
) -> list[tuple[Document, float]]:
    """``ranked`` (best first) with each file's reference-list chunks behind its other
    passages, and the places of a file whose passages are all reference lists behind
    every other file's; each place keeps its score. When ``question`` asks for a
    reference list, its chunks, and the passages that read as entries under any heading,
    come first among their file's passages instead, and no file moves."""
    asked = asks_for_reference_list(question)
    lists = [is_reference_list(doc) or (asked and reads_as_entries(doc)) for doc, _ in ranked]
    if not any(lists):
        return list(ranked)
    by_file: dict[str, list[int]] = {}
    for i, (doc, _) in enumerate(ranked):
        by_file.setdefault(file_key(doc), []).append(i)
    queues: dict[str, list[int]] = {}
    for key, places in by_file.items():
        own = [i for i in places if lists[i]]
        other = [i for i in places if not lists[i]]
        queues[key] = own + other if asked else other + own
    owners = [file_key(doc) for doc, _ in ranked]
    if not asked:  # a file found only by its reference list gives its places up
        only_lists = {key for key, places in by_file.items() if all(lists[i] for i in places)}
        owners = [k for k in owners if k not in only_lists] + [k for k in owners if k in only_lists]
    return [
        (ranked[queues[key].pop(0)][0], score)
        for key, (_, score) in zip(owners, ranked, strict=True)
    ]
