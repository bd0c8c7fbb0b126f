"""The fts5: BM25 leg over a multiscript index: questions typed in Chinese, Korean, Persian."""

from __future__ import annotations

import logging
import unicodedata
from pathlib import Path

import pytest
from klea_utils.stores._retrieval.bm25_scoring import stemmed_preprocessing_func
from klea_utils.stores._retrieval.query_words import lexical_question
from klea_utils.stores.config import BM25StoreInfo, PerDomainConfig, RetrieverConfig
from klea_utils.stores.retrieval._fts5 import Fts5Bm25Index, fts5_query
from klea_utils.stores.retrieval.bm25 import BM25RetrieverManager
from klea_utils.stores.retrieval.fts5_index import write_fts5_chunks
from langchain_core.documents import Document
from retrieval_support import write_corpus_pickle
from sci_etl_core.search.query import Or, Term

CHUNKS = {
    "zh:0": "本文提出一种新的深度学习方法，用于医学图像分割，并在三个数据集上进行了评估。",
    "zh:1": "我们还讨论了模型的计算成本和未来的研究方向。",
    "ja:0": "東京大学の研究者たちは、新しい画像認識の手法を開発した。",
    "ko:0": "이 연구는 의료 영상 분할을 위한 새로운 딥러닝 방법을 제안한다.",
    "fa:0": "این پژوهش روش تازه‌ای برای یادگیری ماشین در پزشکی ارائه می‌دهد.",
    "ar:0": "قدمت هذه الدراسة طريقة جديدة للتعلم الآلي في تحليل الصور الطبية.",
    "en:0": "A new deep learning method for medical image segmentation.",
    "th:0": "งานวิจัยนี้เสนอวิธีการเรียนรู้เชิงลึกแบบใหม่สำหรับการแบ่งส่วนภาพทางการแพทย์",
}

QUESTIONS = [
    ("医学图像分割的方法", "zh:0"),
    ("模型的计算成本", "zh:1"),
    ("画像認識の手法", "ja:0"),
    ("영상 분할 방법은", "ko:0"),
    ("یادگیری ماشین در پزشکی", "fa:0"),
    ("التعلم الآلي للصور الطبية", "ar:0"),
    ("deep learning segmentation", "en:0"),
    ("การแบ่งส่วนภาพทางการแพทย์", "th:0"),
]


def write(path: Path, multiscript: bool) -> None:
    pairs = [(cid, Document(page_content=text)) for cid, text in CHUNKS.items()]
    assert write_fts5_chunks(path, pairs, multiscript=multiscript) == len(CHUNKS)


@pytest.mark.parametrize(("question", "chunk"), QUESTIONS)
def test_a_question_in_the_chunks_language_finds_it_first(
    tmp_path: Path, question: str, chunk: str
) -> None:
    path = tmp_path / "m.sqlite"
    write(path, multiscript=True)
    index = Fts5Bm25Index(path)  # follows the file
    try:
        hits = index.search(question, 3)
        assert hits
        assert hits[0][0].id == chunk
    finally:
        index.close()


@pytest.mark.parametrize("multiscript", [True, False])
@pytest.mark.parametrize(
    "question",
    [
        "روش تازه",  # the first word of "تازه‌ای" (a zero-width non-joiner in the chunk)
        "ارائه می دهد",  # "می‌دهد" typed with a space
        "ارائه می\u200cدهد",  # typed with the non-joiner, as in the chunk
    ],
)
def test_a_persian_compound_is_two_words_however_it_is_typed(
    tmp_path: Path, question: str, multiscript: bool
) -> None:
    path = tmp_path / "fa.sqlite"
    write(path, multiscript=multiscript)
    index = Fts5Bm25Index(path)
    try:
        hits = index.search(question, 3)
        assert hits
        assert hits[0][0].id == "fa:0"
    finally:
        index.close()
    pickled = stemmed_preprocessing_func(CHUNKS["fa:0"])
    assert set(stemmed_preprocessing_func(question)) <= set(pickled)


OLD_PERSIAN = "این پژوهش روش تازهای برای یادگیری ماشین در پزشکی ارائه میدهد."
"""``CHUNKS["fa:0"]`` as chunking rules 11 stored it: each non-joiner removed, its parts
joined (also how a text typed without it reads)."""


@pytest.mark.parametrize("kind", ["fts5", "pickle"])
def test_a_store_holding_a_compound_joined_is_found_by_it_typed_with_the_non_joiner(
    tmp_path: Path, kind: str
) -> None:
    docs = [
        Document(id="fa:0", page_content=OLD_PERSIAN),
        Document(id="en:0", page_content=CHUNKS["en:0"]),
    ]
    if kind == "fts5":
        assert write_fts5_chunks(tmp_path / "o.sqlite", [(d.id or "", d) for d in docs]) == 2
        path = f"fts5:{tmp_path / 'o.sqlite'}"
    else:
        path = str(write_corpus_pickle(tmp_path / "o.pkl", docs))
    store = BM25StoreInfo(name="old", path=path)
    bm25 = BM25RetrieverManager(
        RetrieverConfig(domains={"fa": PerDomainConfig(bm25_stores=[store])}),
        logging.getLogger("test-fa"),
        default_k=2,
    )
    hits = bm25.retrieve("fa", "می\u200cدهد")  # one compound: its parts alone match nothing
    assert [d.id for d, _ in hits] == ["fa:0"]
    assert lexical_question("کتاب\u200cها و می\u200cدهد") == "کتاب ها و می دهد کتابها میدهد"
    assert lexical_question("روش تازه") == "روش تازه"


def test_an_index_built_without_it_keeps_its_words(tmp_path: Path) -> None:
    path = tmp_path / "plain.sqlite"
    write(path, multiscript=False)
    index = Fts5Bm25Index(path)
    try:
        assert index.search("医学图像分割的方法", 3) == []
        assert [doc.id for doc, _ in index.search("deep learning segmentation", 3)] == ["en:0"]
    finally:
        index.close()


def test_the_multiscript_query_is_the_or_of_the_tokenizers_words() -> None:
    assert fts5_query("图像分割", multiscript=True) == Or(
        (Term("图像", ("body",)), Term("像分", ("body",)), Term("分割", ("body",)))
    )
    assert fts5_query("What is the segmentation?", multiscript=True) == Term(
        "segmentation", ("body",)
    )
    assert fts5_query("the", multiscript=True) == fts5_query("the")
    assert fts5_query("?! ،", multiscript=True) is None


async def test_klea_serve_answers_a_chinese_question_typed_without_spaces(tmp_path: Path) -> None:
    from klea_utils.stores.retrieval.fts5_index import awrite_fts5_chunks
    from klea_utils.stores.serve.core.params import SearchParams
    from klea_utils.stores.serve.search.backend import SearchBackend

    path = tmp_path / "m.sqlite"
    pairs = [(cid, Document(page_content=text)) for cid, text in CHUNKS.items()]
    await awrite_fts5_chunks(path, pairs, multiscript=True)
    backend = SearchBackend(path, None, None)
    try:
        out = await backend.search(SearchParams(query="医学图像分割的方法"), passages=3)
        assert out["error"] is None
        assert out["hits"][0]["record_id"] == "zh:0"
        marked = [s["text"][a:b] for s in out["hits"][0]["snippets"] for a, b in s["highlights"]]
        assert "图像" in "".join(marked)
        plain = await backend.search(SearchParams(query="deep learning segmentation"), passages=3)
        assert plain["hits"][0]["record_id"] == "en:0"
    finally:
        await backend.aclose()


async def test_klea_serve_filters_and_facets_by_the_chunks_language(tmp_path: Path) -> None:
    from klea_utils.stores.retrieval.fts5_index import awrite_fts5_chunks
    from klea_utils.stores.serve.core.params import SearchFilters, SearchParams
    from klea_utils.stores.serve.papers.paper import display_metadata, facet_values
    from klea_utils.stores.serve.search.backend import SearchBackend

    path = tmp_path / "m.sqlite"
    pairs = [
        (cid, Document(page_content=text, metadata={"language": cid.split(":")[0]}))
        for cid, text in CHUNKS.items()
    ]
    await awrite_fts5_chunks(path, pairs, multiscript=True)
    backend = SearchBackend(path, None, None)
    try:
        assert "language" in backend.facet_keys
        only = SearchFilters(languages=("en", "ko"))
        out = await backend.search(SearchParams(query="方法 OR method", filters=only), passages=5)
        assert [hit["record_id"] for hit in out["hits"]] == ["en:0"]
        out = await backend.search(SearchParams(query="방법", filters=only), passages=5)
        assert [hit["record_id"] for hit in out["hits"]] == ["ko:0"]
    finally:
        await backend.aclose()
    assert facet_values(display_metadata({"language": "fa"}), "language") == ["fa"]
    assert facet_values(display_metadata({"language": "und"}), "language") == []


async def test_klea_serve_highlights_the_question_words_in_every_script(tmp_path: Path) -> None:
    """Each question's first hit is its chunk, a highlight falls on a piece of the question
    (two characters in a row of it), and none ends inside a letter (before a combining
    mark: a Thai tone mark, Arabic harakat)."""
    from klea_utils.stores.retrieval.fts5_index import awrite_fts5_chunks
    from klea_utils.stores.serve.core.params import SearchParams
    from klea_utils.stores.serve.search.backend import SearchBackend

    path = tmp_path / "m.sqlite"
    pairs = [(cid, Document(page_content=text)) for cid, text in CHUNKS.items()]
    await awrite_fts5_chunks(path, pairs, multiscript=True)
    backend = SearchBackend(path, None, None)
    try:
        for question, chunk in QUESTIONS:
            out = await backend.search(SearchParams(query=question), passages=3)
            assert out["error"] is None
            hit = out["hits"][0]
            assert hit["record_id"] == chunk, question
            spans = [(s["text"], a, b) for s in hit["snippets"] for a, b in s["highlights"]]
            marked = [text[a:b] for text, a, b in spans]
            assert any(m[i : i + 2] in question for m in marked for i in range(len(m) - 1)), (
                question,
                marked,
            )
            for text, _, end in spans:
                after = text[end : end + 1]
                assert not after or not unicodedata.category(after).startswith("M"), (
                    question,
                    marked,
                )
    finally:
        await backend.aclose()
