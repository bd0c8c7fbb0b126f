"""Reference entries of a converted paper: the section found, split, each entry read.

:func:`parse_references` is the room's one entry point; :class:`ParsedReference` is what
the build stores and the service answers with.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from klea_utils.stores._ingest.citations.entry_fields import read_fields
from klea_utils.stores._ingest.citations.entry_split import split_entries
from klea_utils.stores._ingest.citations.reference_section import find_reference_section

__all__ = ["ParsedReference", "parse_references"]
# parse_citations (references with their callouts) lives in citations.py: callouts.py
# imports ParsedReference from here.


@dataclass(frozen=True)
class ParsedReference:
    """One entry of a paper's reference list."""

    label: str
    text: str
    title: str = ""
    authors: tuple[str, ...] = field(default_factory=tuple)
    year: int | None = None
    venue: str = ""
    doi: str | None = None
    arxiv: str | None = None
    style: str = ""

    def __post_init__(self) -> None:
        if not self.text.strip():
            raise ValueError(f"reference {self.label!r}: empty text")

    def as_dict(self) -> dict[str, object]:
        """The JSON form: every field, ``authors`` as a list."""
        return {
            "label": self.label,
            "text": self.text,
            "title": self.title,
            "authors": list(self.authors),
            "year": self.year,
            "venue": self.venue,
            "doi": self.doi,
            "arxiv": self.arxiv,
        }


def parse_references(text: str) -> list[ParsedReference]:
    """The entries of the reference list of ``text`` (a converted paper, Markdown or plain)."""
    section = find_reference_section(text)
    references: list[ParsedReference] = []
    for raw in split_entries(section):
        fields = read_fields(raw.text)
        authors = fields["authors"]
        year = fields["year"]
        doi = fields["doi"]
        arxiv = fields["arxiv"]
        references.append(
            ParsedReference(
                label=raw.label,
                text=raw.text,
                title=str(fields["title"]),
                authors=tuple(str(a) for a in authors) if isinstance(authors, list) else (),
                year=year if isinstance(year, int) else None,
                venue=str(fields["venue"]),
                doi=doi if isinstance(doi, str) else None,
                arxiv=arxiv if isinstance(arxiv, str) else None,
                style=raw.style,
            )
        )
    return references
