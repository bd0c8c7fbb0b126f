"""Support for the retrieval tests: a small corpus, corpus pickles, a tiny cross-encoder,
and the hypothesis strategy for metadata-filter trees (:func:`filter_trees`)."""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from langchain_core.documents import Document

CORPUS: tuple[tuple[str, int, str, dict[str, object]], ...] = (
    (
        "sinha2021.pdf",
        0,
        "Spiking neuron models of the cerebellum simulated with NEURON.",
        {"title": "Cerebellar models", "authors": ["Ankur Sinha", "Padraig Gleeson"], "year": 2021},
    ),
    (
        "sinha2021.pdf",
        1,
        "Granule cells and Golgi cells form a recurrent inhibitory network.",
        {"title": "Cerebellar models", "authors": ["Ankur Sinha", "Padraig Gleeson"], "year": 2021},
    ),
    (
        "magee2000.pdf",
        0,
        "Dendritic integration of excitatory synaptic input in pyramidal neurons.",
        {"title": "Dendritic integration", "authors": ["Jeffrey Magee"], "year": 2000},
    ),
    (
        "jones2015.pdf",
        0,
        "Calcium imaging of cortical neurons in awake mice.",
        {"title": "Calcium imaging", "authors": ["Sarah Jones"], "year": 2015, "journal": "Neuron"},
    ),
    (
        "jones2015.pdf",
        1,
        "Deep learning predicts protein structure from sequence.",
        {"title": "Calcium imaging", "authors": ["Sarah Jones"], "year": 2015, "journal": "Neuron"},
    ),
    (
        "smith2019.pdf",
        0,
        "Reinforcement learning in the basal ganglia and dopamine neurons.",
        {"title": "Basal ganglia", "authors": ["Ann Smith"], "year": 2019},
    ),
)


def filter_trees(
    leaves: st.SearchStrategy[dict[str, Any]], max_leaves: int
) -> st.SearchStrategy[dict[str, Any]]:
    """Filter-DSL trees: ``leaves`` nested under ``$and`` / ``$or`` of 1-3 children each."""
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, min_size=1, max_size=3).map(lambda fs: {"$and": fs}),
            st.lists(children, min_size=1, max_size=3).map(lambda fs: {"$or": fs}),
        ),
        max_leaves=max_leaves,
    )


def corpus_documents() -> list[Document]:
    """The corpus as documents with readable ids ``<file_name>:<chunk_index>``."""
    return [
        Document(
            id=f"{name}:{index}",
            page_content=text,
            metadata={"file_name": name, **meta},
        )
        for name, index, text, meta in CORPUS
    ]


def write_corpus_pickle(path: Path, docs: Sequence[Document], batch_size: int = 2) -> Path:
    """Write ``docs`` as ingestion does: one pickled list per batch."""
    with path.open("wb") as fh:
        for start in range(0, len(docs), batch_size):
            pickle.dump(list(docs[start : start + batch_size]), fh)
    return path


def build_tiny_cross_encoder(folder: Path) -> Path:
    """Save a randomly initialised, tiny BERT cross-encoder (num_labels=1) in ``folder``."""
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    words = sorted({w.lower().strip(".,") for _, _, text, _ in CORPUS for w in text.split()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizer(str(folder / "vocab.txt"))
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
        num_labels=1,
    )
    model = BertForSequenceClassification(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def write_fts5_index(path: Path, docs: Sequence[Document], *, stemming: bool | None = None) -> int:
    """Index ``docs`` (by their ids) into an ``fts5:`` index; the number written.

    The public writer (``retrieval.fts5_index.write_fts5_chunks``), as ingestion uses it.
    """
    from klea_utils.stores.retrieval.fts5_index import write_fts5_chunks

    return write_fts5_chunks(path, [(d.id or "", d) for d in docs], stemming=stemming)
