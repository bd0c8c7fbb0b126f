"""klea-stores-create build writes the collection's citation links (issue 38).

A real build (Docling's Markdown backend, Chroma, MiniLM) of a folder where one paper cites
another by its arXiv id: the links file names the target and the citing sentence; removing
the cited paper drops the link at the next build, adding it back restores it without
converting the citing paper again.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from klea_utils.stores._ingest.citations.build_links import citations_path
from klea_utils.stores.ingestion import StoresBuilder

pytestmark = pytest.mark.slow
MODEL = "huggingface:all-MiniLM-L6-v2"

CITED = "1708.00137_causation.md"
CITED_TEXT = """# Causation does not explain contextuality

Contextuality is a feature of quantum theory. We show that causal models with
fine-tuning do not explain it, and discuss retrocausal toy models in detail.
"""
CITING_TEXT = """# A review of contextuality

Contextuality cannot be explained by causation [1]. Games are another matter [2].

## References

[1] S. Shrapnel and F. Costa, “Causation does not explain contextuality,” Quantum 2, 63
(2018). arXiv:1708.00137.

[2] G. Gutoski and J. Watrous, “Toward a general theory of quantum games,” in Proceedings
of 39th ACM STOC, pp. 565–574 (2007).
"""


def _links(source: Path) -> dict[str, object]:
    return json.loads(citations_path(source, "papers").read_text())["papers"]


def test_build_writes_links_and_follows_removal_and_addition(tmp_path: Path) -> None:
    source = tmp_path / "papers"
    source.mkdir()
    (source / CITED).write_text(CITED_TEXT)
    (source / "review.md").write_text(CITING_TEXT)
    builder = StoresBuilder(MODEL, logging.getLogger("klea-test-citations"), max_tokens=200)
    store = f"chroma:{tmp_path / 'store'}"

    builder.build(str(source), store, "papers")
    review = _links(source)["review.md"]
    assert [r["target"] for r in review["references"]] == [CITED, None]
    (cited_by,) = _links(source)[CITED]["cited_by"]
    assert cited_by["file_name"] == "review.md"
    assert cited_by["contexts"] == ["Contextuality cannot be explained by causation [1]."]

    (source / CITED).unlink()
    builder.build(str(source), store, "papers")
    assert CITED not in _links(source)
    assert [r["target"] for r in _links(source)["review.md"]["references"]] == [None, None]

    (source / CITED).write_text(CITED_TEXT)
    summary = builder.build(str(source), store, "papers")
    assert summary.files_skipped >= 1  # review.md was not converted or stored again
    assert _links(source)["review.md"]["references"][0]["target"] == CITED
