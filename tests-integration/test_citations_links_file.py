"""The citation-links file as klea-ingest's build writes it and klea-retrieval reads it."""

from __future__ import annotations

from pathlib import Path

from klea_utils.stores._ingest.citations.build_links import citations_path

CITING = """# A review of contextuality

Contextuality cannot be explained by causation [1].

## References

[1] S. Shrapnel and F. Costa, “Causation does not explain contextuality,” Quantum 2, 63
(2018). arXiv:1708.00137.
"""


def test_what_the_build_writes_the_serving_side_reads(tmp_path: Path) -> None:
    from klea_utils.stores._ingest.citations.library_links import CitationLibrary, PaperIdentity
    from klea_utils.stores._ingest.citations.links_file import write_links
    from klea_utils.stores._ingest.citations.paper_citations import (
        PaperCitations,
        parse_citations,
    )
    from klea_utils.stores._retrieval.citations_file import read_citations_file

    library = CitationLibrary()
    library.add(PaperIdentity("review.md", title="A review"), parse_citations(CITING))
    cited = PaperIdentity("causation.pdf", title="Causation", arxiv="1708.00137")
    library.add(cited, PaperCitations())
    path = citations_path(tmp_path, "papers")
    write_links(path, library)
    served = read_citations_file(path)
    (reference,) = served.of("review.md")["references"]
    assert reference["target"] == "causation.pdf"
    assert reference["arxiv"] == "1708.00137"
    assert served.of("causation.pdf")["cited_by"] == [
        {
            "file_name": "review.md",
            "title": "A review",
            "contexts": ["Contextuality cannot be explained by causation [1]."],
        }
    ]
