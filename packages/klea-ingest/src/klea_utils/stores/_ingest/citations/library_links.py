"""Links between the papers of one library: which stored paper each reference names.

A :class:`CitationLibrary` holds, per stored file, what the paper is
(:class:`PaperIdentity`: title, authors, year, DOI, arXiv id) and its parsed
:class:`~.paper_citations.PaperCitations`. A reference is resolved to a stored file, in
this order, by:

1. DOI (case-insensitive, resolver prefix dropped);
2. arXiv id (version dropped);
3. the normalised title *and* the first author's surname *and* the year (when both sides
   give one; within :data:`YEAR_TOLERANCE`, a preprint and its journal version).

Precision first: a key that two stored papers share resolves to neither, a paper never
links to itself, and a reference without a DOI, an arXiv id or a whole title match stays
unlinked. Resolution runs over the stored records only, so adding a paper links the
papers already stored that cite it without converting them again, and removing one
drops every link to it (:meth:`CitationLibrary.add`, :meth:`CitationLibrary.remove`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from klea_utils.stores._ingest.citations.identifiers import normalise_doi
from klea_utils.stores._ingest.citations.paper_citations import PaperCitations
from klea_utils.stores._ingest.citations.parse import ParsedReference

__all__ = [
    "YEAR_TOLERANCE",
    "CitationLibrary",
    "CitedBy",
    "PaperIdentity",
    "normalised_title",
    "surname_key",
]


def normalised_title(title: str) -> str:
    """``title`` folded for comparison: accents and case dropped, punctuation as spaces."""
    folded = unicodedata.normalize("NFKD", title)
    folded = "".join(c for c in folded if not unicodedata.combining(c)).casefold()
    return " ".join(re.sub(r"[\W_]+", " ", folded).split())


def surname_key(name: str) -> str:
    """The folded surname of ``name`` (``J. O'Brien`` and ``O'Brien, J.`` -> ``obrien``)."""
    name = name.strip()
    if "," in name:
        name = name.split(",", 1)[0]
    else:
        words = [w for w in name.split() if not re.fullmatch(r"(?:[A-Z]\.-?)+", w)]
        name = words[-1] if words else ""
    folded = unicodedata.normalize("NFKD", name)
    return "".join(c for c in folded if c.isalpha()).casefold()


def _arxiv_key(arxiv: str | None) -> str | None:
    """The id without version or subject class (``math.SG/0106220`` -> ``math/0106220``)."""
    if not arxiv:
        return None
    key = re.sub(r"v\d+$", "", arxiv.strip())
    return re.sub(r"^([a-z\-]+)\.[A-Z]{2}/", r"\1/", key).lower()


@dataclass(frozen=True)
class PaperIdentity:
    """What a stored paper is, as far as linking needs it."""

    file_name: str
    title: str = ""
    authors: tuple[str, ...] = ()
    year: int | None = None
    doi: str | None = None
    arxiv: str | None = None

    def __post_init__(self) -> None:
        if not self.file_name.strip():
            raise ValueError("a stored paper needs a file name")


@dataclass(frozen=True)
class CitedBy:
    """A stored paper that cites another, with the sentences that cite it."""

    file_name: str
    title: str
    contexts: tuple[str, ...]


_TitleKey = tuple[str, str]


class CitationLibrary:
    """The stored papers, their references and the links between them."""

    def __init__(self) -> None:
        self._papers: dict[str, PaperIdentity] = {}
        self._citations: dict[str, PaperCitations] = {}
        self._by_doi: dict[str, set[str]] = {}
        self._by_arxiv: dict[str, set[str]] = {}
        self._by_title: dict[_TitleKey, set[str]] = {}

    def __contains__(self, file_name: object) -> bool:
        return file_name in self._papers

    def __len__(self) -> int:
        return len(self._papers)

    def files(self) -> list[str]:
        """The stored file names, sorted."""
        return sorted(self._papers)

    def identity(self, file_name: str) -> PaperIdentity:
        """What ``file_name`` is (``KeyError`` when it is not stored)."""
        return self._papers[file_name]

    def citations(self, file_name: str) -> PaperCitations:
        """The references and callouts of ``file_name``."""
        return self._citations[file_name]

    def add(self, identity: PaperIdentity, citations: PaperCitations) -> None:
        """Store (or replace) a paper; every reference of the library is resolved anew."""
        if identity.file_name in self._papers:
            self.remove(identity.file_name)
        self._papers[identity.file_name] = identity
        self._citations[identity.file_name] = citations
        for index, key in self._keys(identity):
            index.setdefault(key, set()).add(identity.file_name)

    def remove(self, file_name: str) -> None:
        """Drop a paper, its references and every link to it."""
        identity = self._papers.pop(file_name, None)
        self._citations.pop(file_name, None)
        if identity is None:
            return
        for index, key in self._keys(identity):
            holders = index.get(key)
            if holders is not None:
                holders.discard(file_name)
                if not holders:
                    del index[key]

    def _keys(self, identity: PaperIdentity) -> Iterator[tuple[dict[Any, set[str]], Any]]:
        if identity.doi:
            yield self._by_doi, normalise_doi(identity.doi)
        arxiv = _arxiv_key(identity.arxiv)
        if arxiv:
            yield self._by_arxiv, arxiv
        title = normalised_title(identity.title)
        if len(title.split()) >= 3 and identity.authors:
            yield self._by_title, (title, surname_key(identity.authors[0]))

    def target(self, citing: str, reference: ParsedReference) -> str | None:
        """The stored file ``reference`` (of paper ``citing``) names, or ``None``."""
        candidates: set[str] = set()
        if reference.doi:
            candidates = self._by_doi.get(normalise_doi(reference.doi), set())
        if not candidates and reference.arxiv:
            candidates = self._by_arxiv.get(_arxiv_key(reference.arxiv) or "", set())
        if not candidates and reference.title and reference.authors:
            key = (normalised_title(reference.title), surname_key(reference.authors[0]))
            candidates = {
                name
                for name in self._by_title.get(key, set())
                if _same_year(self._papers[name].year, reference.year)
            }
        candidates = candidates - {citing}
        return next(iter(candidates)) if len(candidates) == 1 else None

    def targets(self, citing: str) -> list[str | None]:
        """The stored file each reference of ``citing`` names, in list order."""
        return [self.target(citing, ref) for ref in self._citations[citing].references]

    def cited_by(self, cited: str) -> list[CitedBy]:
        """The stored papers that cite ``cited``, each with its citing sentences."""
        out: list[CitedBy] = []
        for citing in sorted(self._papers):
            if citing == cited:
                continue
            paper = self._citations[citing]
            entries = [i for i, t in enumerate(self.targets(citing)) if t == cited]
            if not entries:
                continue
            sentences: dict[str, None] = {}
            for entry in entries:
                for sentence in paper.sentences_citing(entry):
                    sentences.setdefault(sentence, None)
            out.append(CitedBy(citing, self._papers[citing].title, tuple(sentences)))
        return out

    def links(self) -> list[tuple[str, str]]:
        """Every ``(citing file, cited file)`` pair, sorted, each once."""
        pairs = {
            (citing, target)
            for citing in self._papers
            for target in self.targets(citing)
            if target is not None
        }
        return sorted(pairs)


YEAR_TOLERANCE = 2
"""Years a title match may differ by: a preprint and its journal version (2001 and 2003)."""


def _same_year(stored: int | None, cited: int | None) -> bool:
    return stored is None or cited is None or abs(stored - cited) <= YEAR_TOLERANCE
