"""Matching real papers (the development set) to a library of them: by the arXiv id in the
file name, and, for copies renamed ``paperN.pdf``, by the title on their first page (old
arXiv ids, a long title with mathematics, a one-line corporate byline); the documents
that are not in the library stay unmatched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from klea_utils.stores.references import load_reference_library
from realpapers import DATA, needs_data

pytestmark = needs_data

LIBRARY = r"""
@article{smith2001serre,
  title = {{Serre-Taubes} duality for pseudoholomorphic curves},
  author = {Smith, Ivan}, year = {2001}, eprint = {math/0106220}, archivePrefix = {arXiv}}
@article{shrapnel2018causation,
  title = {Causation does not explain contextuality},
  author = {Shrapnel, Sally and Costa, Fabio}, year = {2018}, journal = {Quantum},
  eprint = {1708.00137}, archivePrefix = {arXiv}}
@article{meresescu2018water,
  title = {Water residence time estimation by {1D} deconvolution in the form of a
    $l_2$-regularized inverse problem with smoothness, positivity and causality constraints},
  author = {Meresescu, Alina G. and Kowalski, Matthieu and Schmidt, Fr{\'e}d{\'e}ric and
    Landais, Fran{\c{c}}ois},
  year = {2018}, eprint = {1803.07574}, archivePrefix = {arXiv}}
@misc{deepseekv3,
  title = {{DeepSeek-V3} Technical Report}, author = {{DeepSeek-AI}}, year = {2024},
  eprint = {2412.19437}, archivePrefix = {arXiv}}
@inproceedings{buhrman1998quantum,
  title = {Quantum vs. classical communication and computation},
  author = {Buhrman, Harry and Cleve, Richard and Wigderson, Avi}, year = {1998},
  booktitle = {Proceedings of the 30th Annual ACM Symposium on Theory of Computing},
  eprint = {quant-ph/9802040}, archivePrefix = {arXiv}}
"""

EXPECTED = {
    "0106220_serre-taubes-duality.pdf": ("smith2001serre", "title", "title"),
    "1708.00137_causation-contextuality.pdf": ("shrapnel2018causation", "arxiv", "title"),
    "1708.00137_causation-contextuality_type3fonts.pdf": (
        "shrapnel2018causation",
        "arxiv",
        "title",
    ),
    "1803.07574_water-residence-time.pdf": ("meresescu2018water", "arxiv", "title"),
    "2412.19437_deepseek-v3.pdf": ("deepseekv3", "arxiv", "title"),
    "9802040_quantum-vs-classical.pdf": ("buhrman1998quantum", "title", "title"),
    "2206.01062_doclaynet_p3.pdf": (None, None, None),
    "docling_code_and_formula.pdf": (None, None, None),
    "docling_multi_page.pdf": (None, None, None),
}


def _page_one(pdf: Path) -> str:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        return str(document[0].get_textpage().get_text_range())
    finally:
        document.close()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_papers_find_their_entries(name: str, tmp_path: Path) -> None:
    assert DATA is not None
    library_file = tmp_path / "real.bib"
    library_file.write_text(LIBRARY, encoding="utf-8")
    library = load_reference_library([library_file])
    key, by_name, by_text = EXPECTED[name]
    text = _page_one(DATA / name)
    named = library.match(DATA / name, head_text=text)
    renamed = tmp_path / "paper1.pdf"
    shutil.copy(DATA / name, renamed)
    anonymous = library.match(renamed, head_text=text)
    for match, how in ((named, by_name), (anonymous, by_text)):
        assert match.how == how, match.report
        assert (match.entry.citekey if match.entry else None) == key
