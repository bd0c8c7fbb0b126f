"""A natural question whose answer sits mid-paper: the answering passage comes first.

Three generated PDFs are built with ``klea-stores-create build`` (Chroma, pickled BM25,
FTS5, default settings) and asked through ``klea-retrieve --json``. The question is
worded as a reader asks it: question words ("what", "how", "does") that the paper's
introduction also uses, and "inhibit" where the results section says "inhibited" and
"inhibition". The passage of the results section must come first, fused and from each
lexical store alone: question words are left out of the lexical query and words match by
their stem (see ``klea_utils.stores._retrieval.query_words`` and ``BM25StoreInfo``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from integration_cli import run_command

pytestmark = pytest.mark.slow

ANSWER = "4.2 micromolar"
QUESTION = "How strongly does compound K7 inhibit the MEK kinase, and what does it do to relapse?"

PAPERS = {
    "kinase.pdf": (
        "Compound K7 and MEK kinase signalling in yeast",
        [
            (
                "1 Introduction",
                "What does compound K7 do to a cell, and how does a kinase respond to it? "
                "What do we know about MEK, and how do cells inhibit it? Which pathways does "
                "the compound inhibit, and what does that mean for relapse? These are the "
                "questions this paper asks about compound K7 and the MEK kinase.",
            ),
            (
                "2 Methods",
                "Yeast strains were grown in rich medium at 30 degrees. Kinase activity was "
                "measured with a luminescence assay in triplicate, and dose series of the "
                "compound were prepared in dimethyl sulfoxide.",
            ),
            (
                "3 Results",
                "Compound K7 inhibited MEK kinase activity strongly: the inhibition constant "
                f"was {ANSWER}, and relapse of the treated cultures was delayed by two days. "
                "Inhibition was reversible after washing.",
            ),
            (
                "4 Discussion",
                "The assay has limits: luminescence saturates at high activity, and yeast "
                "is not a mammalian cell. Further strains will be tested.",
            ),
        ],
    ),
    "ocean.pdf": (
        "Ocean heat uptake in a warming climate",
        [
            (
                "1 Introduction",
                "The ocean takes up most of the heat trapped by greenhouse gases, and how "
                "fast it does so sets the pace of surface warming.",
            ),
            (
                "2 Data",
                "Argo floats sample temperature and salinity in the upper two kilometres of "
                "the ocean every ten days.",
            ),
        ],
    ),
    "halos.pdf": (
        "Dark matter halos of dwarf galaxies",
        [
            (
                "1 Introduction",
                "Dwarf galaxies are dominated by dark matter, which makes them good probes "
                "of what the halos look like at small scales.",
            ),
            (
                "2 Rotation curves",
                "Rotation curves of twenty dwarfs rise slowly, which favours cored halos "
                "over cusps in the inner kiloparsec.",
            ),
        ],
    ),
}


def _write_paper(path: Path, title: str, sections: list[tuple[str, str]]) -> None:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer

    styles = getSampleStyleSheet()
    story = [Paragraph(title, styles["Title"]), Spacer(1, 12)]
    for heading, text in sections:
        story += [Paragraph(heading, styles["Heading2"]), Paragraph(text, styles["BodyText"])]
    SimpleDocTemplate(str(path), pagesize=A4).build(story)


def _run(*argv: str, cwd: Path) -> str:
    done = run_command(*argv, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _first_passage(out: str) -> str:
    hits = next(iter(json.loads(out).values()))
    return " ".join(str(hits[0]["page_content"]).split())


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("answer-in-paper")
    (root / "papers").mkdir()
    for name, (title, sections) in PAPERS.items():
        _write_paper(root / "papers" / name, title, sections)
    _run(
        "klea-stores-create",
        "build",
        "papers",
        "--store",
        "chroma:stores/chroma",
        "--collection",
        "papers",
        "--bm25-store",
        "stores/bm25.pkl",
        "--fts5-store",
        "stores/fts5.sqlite",
        "--max-tokens",
        "64",
        "--write-stores-config",
        "stores/stores.json",
        cwd=root,
    )
    return root / "stores"


@pytest.mark.parametrize(
    "store_args",
    [
        ["--stores-config", "stores.json"],
        ["--bm25-store", "bm25.pkl"],
        ["--bm25-store", "fts5:fts5.sqlite"],
    ],
    ids=["fused", "bm25-pickle", "bm25-fts5"],
)
def test_the_mid_paper_answer_comes_first(stores: Path, store_args: list[str]) -> None:
    out = _run("klea-retrieve", *store_args, "--json", "-q", QUESTION, cwd=stores)
    assert ANSWER in _first_passage(out)
