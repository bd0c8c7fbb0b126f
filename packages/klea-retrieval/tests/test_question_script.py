"""A question the packaged MiniLM cannot read gives its vector leg no vote (issue 37).

The rule (``_retrieval/question_script``) is checked against the packaged model's own
WordPiece vocabulary and tokenizer; the pipeline against a real library (Chroma with the
packaged MiniLM, a BM25 pickle and an ``fts5:`` index) holding the Japanese poem of
realpapers-wild's ``pdfminer__jo.pdf`` and slides of ``pdfminer__nlp2004slides.pdf``, and
asked the multiscript set's ``m04``, whose answer MiniLM's list outvoted.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._retrieval.question_script import (
    READ_SHARE,
    embedder_reads_question,
    latin_only,
    latin_share,
)
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.packaged_minilm import packaged_minilm_path
from klea_utils.stores.pipeline import KleaPipeline
from klea_utils.stores.utils import SOURCE_SCORES_KEY
from langchain_core.documents import Document
from retrieval_backends import one_passage_library

MINILM = "huggingface:all-MiniLM-L6-v2"

# Questions of scripts/bench/questions/multiscript.jsonl, typed as people type them.
UNREAD = {
    "ja": "宇宙塵をたべて何を呼吸するの",
    "zh": "高速公路八车道停车区用地指标基准值",
    "ko": "빅포인트 유효기간은 몇 년이에요",
    "ar": "نتائج الانتخابات التشريعية 2014 دائرة مدنين معتمدية جرجيس",
    "fa": "نتایج انتخابات مدنین جربه میدون و بنی خداش",
    "th": "จำนวนเชิงซ้อน z ที่มีค่า Im มากที่สุด",
    "ru": "сколько государственных вузов в Ростове",
}
READ = {
    "en": "In the Japanese poem, what does the speaker breathe while eating cosmic dust?",
    "es": "cuántos días hábiles tiene el empleador para completar la Sección 2",
    "fr": "combien de pays ont adopté l'accord de Paris COP 21",
    "mixed": "Zipf の法則 and named entity extraction",
}


def _script(char: str) -> str:
    return unicodedata.name(char, "?").split()[0]


def test_minilm_reads_latin_words_and_every_other_script_letter_by_letter():
    """The rule's premise, read from the packaged vocabulary: pieces of two letters or
    more are Latin but for a handful (Cyrillic 8, Greek 4 in 30,522)."""
    vocab = (packaged_minilm_path() / "vocab.txt").read_text(encoding="utf-8").split("\n")
    words = [piece.removeprefix("##") for piece in vocab if not piece.startswith("[")]
    multi = [w for w in words if sum(c.isalpha() for c in w) >= 2]
    not_latin = [w for w in multi if latin_share(w) != 1.0]
    assert len(multi) > 25_000
    assert len(not_latin) <= 20
    singles = {_script(w) for w in words if len(w) == 1 and w.isalpha()}
    assert {"CJK", "HIRAGANA", "HANGUL", "ARABIC", "THAI", "CYRILLIC"} <= singles


@pytest.mark.parametrize("language", sorted(UNREAD))
def test_the_tokenizer_cuts_an_unread_question_into_single_letters(language):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(packaged_minilm_path() / "tokenizer.json"))
    tokenizer.no_padding()
    question = UNREAD[language]
    pieces = [p.removeprefix("##") for p in tokenizer.encode(question).tokens[1:-1]]
    assert pieces
    letters = [p for p in pieces if any(c.isalpha() for c in p) or p == "[UNK]"]
    one_letter = [p for p in letters if p == "[UNK]" or sum(c.isalpha() for c in p) == 1]
    assert len(one_letter) >= 0.8 * len(letters)
    assert not embedder_reads_question(MINILM, question)


@pytest.mark.parametrize("language", sorted(READ))
def test_latin_questions_are_read(language):
    assert embedder_reads_question(MINILM, READ[language])


@pytest.mark.parametrize(
    ("spec", "latin"),
    [
        (MINILM, True),
        ("huggingface:sentence-transformers/all-MiniLM-L6-v2:local", True),
        ("huggingface:intfloat/multilingual-e5-small", False),
        ("use:multilingual-v3", False),
        ("ollama:nomic-embed-text", False),
        ("custom", False),
        (None, False),
    ],
)
def test_only_the_packaged_minilm_is_taken_to_read_latin_alone(spec, latin):
    assert latin_only(spec) is latin
    assert embedder_reads_question(spec, UNREAD["ja"]) is not latin


@given(st.text(alphabet=st.characters(codec="ascii")))
def test_ascii_text_is_always_read(text):
    assert embedder_reads_question(MINILM, text)


@given(st.text(alphabet="宇宙塵呼吸빅포인트مدنينсколько"), st.text(alphabet="abcdeé 123?"))
def test_the_share_of_latin_letters_decides(foreign, latin):
    question = foreign + latin
    share = latin_share(question)
    letters = sum(c.isalpha() for c in question)
    if letters == 0:
        assert share is None
        assert embedder_reads_question(MINILM, question)
    else:
        assert share == pytest.approx(sum(c.isalpha() for c in latin) / letters)
        assert embedder_reads_question(MINILM, question) is (share >= READ_SHARE)


POEM = (
    "（すべてがわたくしの中のみんなであるやうに\n宇宙塵をたべ、または空気や塩水を呼吸しながら\n"
    "そのとほりの心象スケッチです\n（あらゆる透明な幽霊の複合体）"
)
TEXTS = {
    "jo.pdf": POEM,
    "slides-2.pdf": "研究の背景\n• 固有表現抽出：\n- 文脈、あるいは字句的な知識をもちいて、文章中に"
    "現れる固有表現をタグ付けする。",
    "slides-3.pdf": "研究の背景\n• 字句的な知識を構築する方法：\n- 機械学習を用いてコーパスから"
    "字句的な規則を自動的に学習する。\n■ [Strzalkowski 1996]\n■ [Collins 1999]",
    "slides-4.pdf": "疎なデータの問題\n• いかにして頻度の少ない単語の字句的な情報を学習するか？\n"
    "- 例. 「徳島 (Tokushima)」という地名は1995年の New York Times (14万記事) に１回しか現れない。",
    "rain.pdf": "Monsoon rainfall over the plateau doubled in the last decade.",
}


@pytest.fixture(scope="module")
def library(tmp_path_factory, minilm_embeddings) -> RetrieverConfig:
    folder = tmp_path_factory.mktemp("question_script")
    return one_passage_library(
        folder, TEXTS, minilm_embeddings, collection="papers", embedding_model=MINILM
    )


def _hits(library, minilm_embeddings, question: str, votes: str) -> list[Document]:
    pipeline = KleaPipeline(
        library.model_copy(deep=True),
        embedding_model=minilm_embeddings,
        k=3,
        recency=False,
        context="off",
        votes=votes,
    )
    try:
        result = pipeline.retrieve("papers", question)
    finally:
        pipeline.close()
    assert result.notes == ()
    return [doc for doc, _ in result.hits]


def _voters(hits: list[Document]) -> set[str]:
    return {label.split(":")[0] for doc in hits for label in doc.metadata[SOURCE_SCORES_KEY]}


def test_a_japanese_question_is_fused_from_the_lexical_legs_alone(library, minilm_embeddings):
    hits = _hits(library, minilm_embeddings, UNREAD["ja"], "auto")
    assert hits[0].metadata["file_name"] == "jo.pdf"
    assert _voters(hits) == {"BM25"}
    # asked to count every store, the vector leg votes as before
    assert "vector store" in _voters(_hits(library, minilm_embeddings, UNREAD["ja"], "stores"))


def test_an_english_question_keeps_the_vector_leg(library, minilm_embeddings):
    question = "how much did monsoon rainfall change"
    auto = _hits(library, minilm_embeddings, question, "auto")
    assert "vector store" in _voters(auto)
    assert [d.metadata["file_name"] for d in auto] == [
        d.metadata["file_name"] for d in _hits(library, minilm_embeddings, question, "stores")
    ]


def test_the_vector_leg_answers_when_no_lexical_list_finds_anything(library, minilm_embeddings):
    hits = _hits(library, minilm_embeddings, "Муссон", "auto")
    assert hits
    assert _voters(hits) == {"vector store"}
