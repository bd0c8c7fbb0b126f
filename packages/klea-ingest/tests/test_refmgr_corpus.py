"""End to end on the sample corpus: its hand-written ``.bib`` and a Zotero folder holding
the same library each give 12 of 12 papers their true title, authors and venue, through
the real ``klea-stores-create chunk``; ``citekey``, ``tags`` and ``collections`` reach the
stores."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from zotero_library import Attachment, Item, build_zotero

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "examples" / "corpus"
BIN = Path(sys.executable).parent
ENV = {**os.environ, "KLEA_DOI_LOOKUP": "0", "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}


def _truth() -> ModuleType:
    spec = importlib.util.spec_from_file_location("corpus_generate", CORPUS / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _create(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(BIN / "klea-stores-create"), *argv],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _template(folder: Path) -> dict[str, dict[str, Any]]:
    path = folder / ".klea-cache" / "metadata-map.template.json"
    return {name: entry["DEFAULT"] for name, entry in json.loads(path.read_text()).items()}


def _wrong(defaults: dict[str, dict[str, Any]], source: str) -> list[str]:
    generate = _truth()
    wrong = []
    for paper in generate.PAPERS:
        name = f"{paper.stem}{generate.SUFFIX[paper.fmt]}"
        got = defaults[name]
        if (got.get("title"), got.get("authors"), got.get("journal"), got.get("year")) != (
            paper.title, list(paper.authors), paper.journal, paper.year,
        ):  # fmt: skip
            wrong.append(f"{name}: {got}")
        if got.get("doi", "").casefold() != paper.doi or got["_sources"]["title"] != source:
            wrong.append(f"{name}: doi or source {got}")
    return wrong


def _zotero_items(papers: Path) -> list[Item]:
    generate = _truth()
    items = []
    for index, paper in enumerate(generate.PAPERS):
        name = f"{paper.stem}{generate.SUFFIX[paper.fmt]}"
        creators = []
        for author in paper.authors:
            first, last = author.rsplit(" ", 1)
            creators.append(("author", first, last))
        items.append(
            Item(
                key=f"ITEM{index:04d}",
                fields={
                    "title": paper.title,
                    "publicationTitle": paper.journal,
                    "date": f"{paper.year}-00-00 {paper.year}",
                    "DOI": paper.doi,
                },
                creators=creators,
                tags=["to-read"] if index % 2 else ["read"],
                collections=["Sample corpus"],
                attachments=[
                    Attachment(f"ATT{index:05d}", f"storage:{name}", source=papers / name)
                ],
            )
        )
    return items


def test_a_bib_and_a_zotero_folder_give_every_paper_its_true_record(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    shutil.copytree(CORPUS / "papers", papers)
    chunked = _create("chunk", "papers", "--bib", str(CORPUS / "papers.bib"), cwd=tmp_path)
    assert "Reference library: 12 of 12 file(s) matched" in chunked.stdout
    assert "protein-folding-scanned.pdf: matched by attachment (bibtex rossi2016chaperones)" in (
        chunked.stdout
    )  # the OCRed paper, whose first heading is "Abstract"
    assert "transformer-attention.html: matched by title 1.00" in chunked.stdout  # no DOI
    bib = _template(papers)
    assert _wrong(bib, "bibtex") == []
    assert bib["crispr-off-target.md"]["citekey"] == "gupta2023predicting"
    assert bib["crispr-off-target.md"]["tags"] == ["CRISPR", "genome editing", "to-read"]
    assert all(d["_metadata_complete"] for d in bib.values())
    linted = _create("map-lint", "papers", cwd=tmp_path)
    assert "OK: no issues found" in linted.stdout

    zotero = build_zotero(tmp_path / "Zotero", _zotero_items(CORPUS / "papers"))
    chunked = _create("chunk", "papers", "--zotero", str(zotero), cwd=tmp_path)  # cached
    assert "Reference library: 12 of 12 file(s) matched" in chunked.stdout
    from_zotero = _template(papers)
    assert _wrong(from_zotero, "zotero") == []
    assert {d["_match"].split(" (")[0] for d in from_zotero.values()} == {
        "matched by attachment"
    }  # every paper is a storage: attachment
    assert from_zotero["crispr-off-target.md"]["citekey"] == "gupta_predicting_2023"

    _create(
        "store", "papers", "--store", "chroma:stores/chroma", "--collection", "papers",
        "--bm25-store", "stores/papers.bm25", cwd=tmp_path,
    )  # fmt: skip
    from klea_utils.stores.retrieval.bm25 import read_corpus

    stored = {
        d.metadata["file_name"]: d.metadata
        for d in read_corpus(tmp_path / "stores" / "papers.bm25")
    }
    crispr = stored["crispr-off-target.md"]
    assert crispr["citekey"] == "gupta_predicting_2023"
    assert crispr["tags"] == ["to-read"]
    assert crispr["collections"] == ["Sample corpus"]
    assert {"Maya Gupta", "Tom Becker"} <= set(crispr["authors"])
