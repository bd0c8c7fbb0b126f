"""The lexical legs on non-Latin files: questions typed in the file's language, top 3.

Run with ``uv run --frozen python scripts/bench/multiscript_lexical.py [--data DIR]``
(``DIR`` defaults to ``/work/shared/data/realpapers-wild``). The pages of the
non-Latin files of realpapers-wild (pypdfium2's text layer, one chunk per page) and of
three English papers of realpapers-dev are written to an ``fts5:`` index twice, with
``unicode61`` and with the multiscript segmentation (issue 37), and indexed by the
pickled leg's stemmed tokenizer; each question below, typed as a person types it (no
spaces in Chinese and Japanese, particles in Korean, a Persian keyboard for Arabic
words), counts when a page of its file is in the top 3. Printed: per language and leg,
answered / asked.
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import tempfile
from collections import defaultdict
from pathlib import Path

import pypdfium2 as pdfium
from klea_utils.stores._retrieval.bm25_scoring import Bm25Index, stemmed_preprocessing_func
from klea_utils.stores.retrieval._fts5 import Fts5Bm25Index
from klea_utils.stores.retrieval.fts5_index import write_fts5_chunks
from langchain_core.documents import Document

ENGLISH = (
    "1803.07574_water-residence-time.pdf",
    "9802040_quantum-vs-classical.pdf",
    "1708.00137_causation-contextuality.pdf",
)

# (language, file, question): my own questions, written from each file's text.
QUESTIONS: tuple[tuple[str, str, str], ...] = (
    ("ko", "unstructured__korean-text-with-tables.pdf", "포인트의 유효기간은"),
    ("ko", "unstructured__korean-text-with-tables.pdf", "보너스포인트를 빅포인트와 합산"),
    ("ko", "unstructured__korean-text-with-tables.pdf", "상품권 구매는 적립에서 제외"),
    ("ja", "pdfminer__nlp2004slides.pdf", "固有表現抽出の研究"),
    ("ja", "pdfminer__nlp2004slides.pdf", "新聞記事から固有表現を発見"),
    ("ja", "pdfminer__nlp2004slides.pdf", "コーパスから規則を自動的に学習"),
    ("ja", "pdfminer__jo.pdf", "心象スケッチ"),
    ("ja", "pdfminer__jo.pdf", "透明な幽霊の複合体"),
    ("zh", "pdfplumber__issue-336-example.pdf", "停车区用地指标基准值"),
    ("zh", "pdfplumber__issue-336-example.pdf", "高速公路车道数"),
    ("zh", "pdfplumber__issue-336-example.pdf", "安徽省建设用地使用标准"),
    ("ar", "camelot__mednine.pdf", "مدنين الجنوبية"),
    ("ar", "camelot__mednine.pdf", "جربة حومة السوق"),
    ("fa-keyboard", "camelot__mednine.pdf", "سیدی مخلوف"),
    ("fa-keyboard", "camelot__mednine.pdf", "جربه میدون"),
    ("th", "pdfjs__issue13211.pdf", "เวกเตอร์"),
    ("th", "pdfjs__issue13211.pdf", "จำนวนเชิงซ้อน"),
)


def pages(path: Path) -> list[str]:
    pdf = pdfium.PdfDocument(path)
    try:
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()


def corpus(wild: Path, dev: Path) -> list[tuple[str, Document]]:
    files = sorted({file for _, file, _ in QUESTIONS})
    sources = [wild / "pdf" / f for f in files] + [dev / f for f in ENGLISH if (dev / f).exists()]
    out: list[tuple[str, Document]] = []
    for path in sources:
        for number, text in enumerate(pages(path)):
            doc_id = f"{path.name}:{number}"
            out.append((doc_id, Document(id=doc_id, page_content=text)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    shared = Path(__file__).resolve().parents[3] / "shared" / "data"
    parser.add_argument("--data", type=Path, default=shared / "realpapers-wild")
    parser.add_argument("--dev", type=Path, default=shared / "realpapers-dev" / "pdf")
    args = parser.parse_args()
    chunks = corpus(args.data, args.dev)
    print(f"{len(chunks)} pages")
    answered: dict[tuple[str, str], int] = defaultdict(int)
    asked: dict[str, int] = defaultdict(int)
    with tempfile.TemporaryDirectory() as tmp:
        legs = {}
        for name, multiscript in (("fts5 unicode61", False), ("fts5 multiscript", True)):
            path = Path(tmp) / f"{multiscript}.sqlite"
            write_fts5_chunks(path, chunks, multiscript=multiscript)
            legs[name] = Fts5Bm25Index(path)
        pickled = Bm25Index.from_documents([d for _, d in chunks], stemmed_preprocessing_func)
        for language, file, question in QUESTIONS:
            asked[language] += 1
            results = {name: leg.search(question, 3) for name, leg in legs.items()}
            results["pickled multiscript"] = pickled.scored_documents(question, k=3)
            for name, hits in results.items():
                if any(str(doc.id).startswith(f"{file}:") for doc, _ in hits):
                    answered[(language, name)] += 1
        for leg in legs.values():
            leg.close()
    names = ("fts5 unicode61", "fts5 multiscript", "pickled multiscript")
    print("language      " + "  ".join(f"{n:>20}" for n in names))
    for language, count in asked.items():
        row = "  ".join(f"{answered[(language, n)]:>17}/{count:<2}" for n in names)
        print(f"{language:<13} {row}")


if __name__ == "__main__":
    main()
