"""One vote per leg: two lexical stores of the same chunks do not outvote the vector store.

Real Chroma (packaged MiniLM), a real BM25 pickle and a real ``fts5:`` index of the same
five chunks, as ``klea-stores-create build`` writes them. The question shares words with
an auditing text only; the vector leg finds the one chunk that answers it, in other words.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._retrieval.fusion import (
    VOTES,
    document_key,
    reads_many_languages,
    votes_for,
    with_top_k_votes,
)
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.pipeline import KleaPipeline
from klea_utils.stores.retrieve_cli import VOTES as CLI_VOTES
from klea_utils.stores.utils import (
    RRF_K,
    SOURCE_SCORES_KEY,
    rrf_merge,
    rrf_merge_legs,
)
from langchain_core.documents import Document
from retrieval_backends import one_passage_library

COLLECTION = "fusion_votes"
QUESTION = "what causes a heart attack"

TEXTS = {
    "infarct.pdf": "Myocardial infarction follows the blockage of a coronary artery by a clot.",
    "audit.pdf": "Schedule C of the simplified tax return lists business income, insurance "
    "contributions and depreciation; the heart of the form is line 31, and an attack on "
    "its totals by the auditor causes a second review of every receipt.",
    "cerebellum.pdf": "Granule cells of the cerebellum receive inhibition from Golgi cells.",
    "tax.pdf": "The simplified tax return lists income and insurance contributions.",
    "rain.pdf": "Monsoon rainfall over the plateau doubled in the last decade.",
}


@pytest.fixture(scope="module")
def config(tmp_path_factory, minilm_embeddings) -> RetrieverConfig:
    folder = tmp_path_factory.mktemp("votes")
    return one_passage_library(folder, TEXTS, minilm_embeddings, collection=COLLECTION)


def fused_scores(config, minilm_embeddings, votes: str) -> dict[str, float]:
    pipeline = KleaPipeline(
        config.model_copy(deep=True),
        embedding_model=minilm_embeddings,
        k=1,
        focus=None,
        recency=False,
        context="off",
        votes=votes,
    )
    try:
        result = pipeline.retrieve("papers", QUESTION)
    finally:
        pipeline.close()
    assert result.notes == ()
    return {doc.metadata["file_name"]: score for doc, score in result.hits}


def test_the_vector_leg_finds_what_both_lexical_stores_miss(config, minilm_embeddings):
    pipeline = KleaPipeline(config.model_copy(deep=True), embedding_model=minilm_embeddings, k=1)
    try:
        vector = pipeline.vector.retrieve_per_store("papers", QUESTION)
        lexical = pipeline.bm25.retrieve_per_store("papers", QUESTION)
    finally:
        pipeline.close()
    assert [d.metadata["file_name"] for _, hits in vector for d, _ in hits] == ["infarct.pdf"]
    assert [d.metadata["file_name"] for _, hits in lexical for d, _ in hits] == [
        "audit.pdf",
        "audit.pdf",
    ]


def test_one_vote_per_leg_the_vector_hit_is_not_outvoted_twice(config, minilm_embeddings):
    scores = fused_scores(config, minilm_embeddings, "legs")
    assert scores == pytest.approx({"infarct.pdf": 1 / (RRF_K + 1), "audit.pdf": 1 / (RRF_K + 1)})


def test_one_vote_per_store_is_kept_on_request(config, minilm_embeddings):
    scores = fused_scores(config, minilm_embeddings, "stores")
    assert scores == pytest.approx({"infarct.pdf": 1 / (RRF_K + 1), "audit.pdf": 2 / (RRF_K + 1)})
    assert max(scores, key=scores.__getitem__) == "audit.pdf"


def test_the_fused_hit_keeps_each_stores_own_score(config, minilm_embeddings):
    pipeline = KleaPipeline(
        config.model_copy(deep=True), embedding_model=minilm_embeddings, k=2, focus=None
    )
    try:
        hits = pipeline.retrieve("papers", QUESTION, context="off").hits
    finally:
        pipeline.close()
    audit = next(d for d, _ in hits if d.metadata["file_name"] == "audit.pdf")
    labels = set(audit.metadata[SOURCE_SCORES_KEY])
    assert {"BM25: bm25.pkl", "BM25: fts5.sqlite"} <= labels
    assert "BM25" not in labels


def test_auto_counts_legs_only_for_a_multilingual_embedder(config, minilm_embeddings):
    """The English figures were measured with a vote per store; a library embedded by a
    multilingual model, whose vector leg alone finds papers across languages, gets a vote
    per leg (the domain's configured ``embedding_model`` says which)."""
    assert fused_scores(config, minilm_embeddings, "auto") == fused_scores(
        config, minilm_embeddings, "stores"
    )
    multilingual = config.model_copy(deep=True)
    multilingual.domains["papers"].embedding_model = "use:multilingual-v3"
    assert fused_scores(multilingual, minilm_embeddings, "auto") == fused_scores(
        config, minilm_embeddings, "legs"
    )


@pytest.mark.parametrize(
    ("spec", "many"),
    [
        ("use:multilingual-v3", True),
        ("huggingface:sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2", True),
        ("huggingface:intfloat/multilingual-e5-small", True),
        ("huggingface:sentence-transformers/LaBSE", True),
        ("huggingface:BAAI/bge-m3", True),
        ("huggingface:all-MiniLM-L6-v2", False),
        ("custom", False),
        (None, False),
    ],
)
def test_multilingual_models_are_known_by_name(spec, many):
    assert reads_many_languages(spec) is many
    assert votes_for("auto", spec) == ("legs" if many else "stores")
    assert votes_for("stores", spec) == "stores"


def test_bad_votes_are_refused_by_name(config):
    with pytest.raises(ValueError, match="votes must be one of auto, legs, stores, got 'fused'"):
        KleaPipeline(config, votes="fused")
    assert CLI_VOTES == VOTES


def doc(name: str) -> Document:
    return Document(page_content=name, metadata={"file_name": name})


def test_two_agreeing_lexical_lists_no_longer_decide_alone():
    """The vector's first hit, second in both lexical lists, against the lexical lists'
    first hit, third in the vector list: per store the lexical hit wins by two votes, per
    leg the vector hit wins."""
    v, lex, other = doc("v"), doc("lex"), doc("other")
    vector = ("vector store", [(v, 0.9), (other, 0.8), (lex, 0.7)])
    pickle_list = ("BM25: bm25.pkl", [(lex, 9.0), (v, 8.0)])
    fts5_list = ("BM25: fts5.sqlite", [(lex, 5.0), (v, 4.0)])
    per_store = rrf_merge([vector, pickle_list, fts5_list])
    per_leg = rrf_merge_legs([("vector store", [vector]), ("BM25", [pickle_list, fts5_list])])
    assert per_store[0][0].metadata["file_name"] == "lex"
    assert per_leg[0][0].metadata["file_name"] == "v"
    assert per_leg[0][1] == pytest.approx(1 / (RRF_K + 1) + 1 / (RRF_K + 2))
    assert per_leg[0][0].metadata[SOURCE_SCORES_KEY] == {
        "vector store": 0.9,
        "BM25: bm25.pkl": 8.0,
        "BM25: fts5.sqlite": 4.0,
    }


lists = st.lists(st.sampled_from("abcdef"), max_size=5, unique=True).map(
    lambda names: [(doc(n), 1.0) for n in names]
)


@given(st.lists(lists, max_size=3), st.lists(lists, max_size=3), st.integers(0, 6))
def test_legs_of_one_list_are_plain_rrf_and_order_is_fused_rrf(vectors, lexical, cap):
    vector_sets = [(f"vector store: {i}", r) for i, r in enumerate(vectors)]
    lexical_sets = [(f"BM25: {i}", r) for i, r in enumerate(lexical)]
    legs = [("vector store", vector_sets), ("BM25", lexical_sets)]
    got = rrf_merge_legs(legs, num_refs_max=cap)
    expected_sets = [
        sets[0] if len(sets) == 1 else (leg, rrf_merge(sets)) for leg, sets in legs if sets
    ]
    expected = rrf_merge(expected_sets, num_refs_max=cap)
    assert [(document_key(d), s) for d, s in got] == [(document_key(d), s) for d, s in expected]
    if len(vectors) <= 1 and len(lexical) <= 1:
        plain = rrf_merge([*vector_sets, *lexical_sets], num_refs_max=cap)
        assert [(document_key(d), s) for d, s in got] == [(document_key(d), s) for d, s in plain]


def test_one_vote_per_leg_counts_each_lists_top_k_twice(tmp_path):
    """The vector leg's first hit, in no lexical list, against passages every list ranks
    lower in the deep focus pool: RRF over the pool ranks the agreements first. With one
    vote per leg (a multilingual embedder) each list's own top ``k`` counts again, and
    the vector leg's first place is kept."""
    poem, low = doc("poem.pdf"), doc("everywhere.pdf")
    fillers = [doc(f"lexical-{i}.pdf") for i in range(4)]
    vector = ("vector store", [(poem, 0.3), (low, 0.2), *((d, 0.1) for d in fillers)])
    lexical = [(d, 9.0 - i) for i, d in enumerate([*fillers, low])]
    sets = [vector, ("BM25: bm25.pkl", lexical), ("BM25: fts5.sqlite", lexical)]

    def kept(embedding_model: str) -> list[str]:
        library = RetrieverConfig.model_validate(
            {
                "domains": {
                    "papers": {
                        "bm25_stores": [{"name": "b", "path": str(tmp_path / "b.pkl")}],
                        "embedding_model": embedding_model,
                    }
                }
            }
        )
        pipeline = KleaPipeline(library, k=1)  # nothing is loaded: the lists are given
        try:
            fused = pipeline._fuse("the poem", sets, [1, 1, 1], "papers")
        finally:
            pipeline.close()
        return [d.metadata["file_name"] for d, _ in fused]

    assert kept("use:multilingual-v3") == ["lexical-0.pdf", "poem.pdf"]
    # a vote per store (MiniLM): the deep pool's order, as before
    assert kept("huggingface:all-MiniLM-L6-v2") == ["lexical-0.pdf", "lexical-1.pdf"]


named = st.lists(st.sampled_from("abcdefgh"), max_size=8, unique=True)
scores = st.lists(st.floats(0.0, 1.0), min_size=8, max_size=8)


@given(named, named, scores, scores)
def test_top_k_scores_are_added_to_the_pools(pool_names, top_names, pool_scores, top_scores):
    pool = [(doc(n), s) for n, s in zip(pool_names, pool_scores, strict=False)]
    top_k = [(doc(n), s) for n, s in zip(top_names, top_scores, strict=False)]
    summed = with_top_k_votes(pool, top_k)
    extra = dict(zip(top_names, top_scores, strict=False))
    expected = {n: s + extra.get(n, 0.0) for n, s in zip(pool_names, pool_scores, strict=False)}
    assert {d.metadata["file_name"]: s for d, s in summed} == expected
    assert len(summed) == len(pool)
    assert [s for _, s in summed] == sorted(expected.values(), reverse=True)
    if not top_k:  # nothing to add: the pool as it was, in its order (ties included)
        assert [d.metadata["file_name"] for d, _ in summed] == [
            n for n, _ in sorted(zip(pool_names, pool_scores, strict=False), key=lambda p: -p[1])
        ]
