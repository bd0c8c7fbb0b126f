"""A paper's reference list with the callouts in its text: what the build stores per paper."""

from __future__ import annotations

from dataclasses import dataclass, field

from klea_utils.stores._ingest.citations.callouts import CitationContext, find_callouts
from klea_utils.stores._ingest.citations.parse import ParsedReference, parse_references
from klea_utils.stores._ingest.citations.reference_section import body_before_references

__all__ = ["PaperCitations", "parse_citations"]


@dataclass(frozen=True)
class PaperCitations:
    """The entries of one paper's reference list and the sentences that cite them."""

    references: tuple[ParsedReference, ...] = ()
    contexts: tuple[CitationContext, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        for context in self.contexts:
            if context.entry >= len(self.references):
                raise ValueError(
                    f"callout {context.callout!r} names entry {context.entry}, "
                    f"past the {len(self.references)} references"
                )

    def sentences_citing(self, entry: int) -> list[str]:
        """The distinct sentences that cite entry ``entry``, in reading order."""
        seen: dict[str, None] = {}
        for context in self.contexts:
            if context.entry == entry:
                seen.setdefault(context.sentence.strip(), None)
        return list(seen)


def parse_citations(text: str) -> PaperCitations:
    """References and callouts of a converted paper (Markdown or plain text)."""
    references = parse_references(text)
    if not references:
        return PaperCitations()
    contexts = find_callouts(body_before_references(text), references)
    return PaperCitations(references=tuple(references), contexts=tuple(contexts))
