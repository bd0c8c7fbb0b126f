"""How close the best sentence of each passage lies to the question (internal).

Passage focus (:mod:`~klea_utils.stores._retrieval.passage_focus`) reads words, and a
chunk's stored vector averages the whole chunk: a passage that says the answer in other
words than the question ("negative values" for "below zero") in one of its sentences
loses to a neighbour that repeats the question's words. Embedding each sentence of the
top passages with the library's own embedder (the packaged MiniLM by default) and keeping
a passage's best sentence cosine to the question is a semantic signal at the grain of the
answer, with no downloaded model.

- :func:`passage_sentences` cuts a passage into the sentences that are embedded: lines
  (a table row, a heading) and sentences inside a line, less the heading chain that
  opens every chunk of a section and fragments of fewer than :data:`MIN_WORDS` words.
- :class:`SentenceVectors` embeds them, a passage once: its vectors are kept per passage
  text (the last :data:`CACHE_PASSAGES` passages), so a resident process (``klea-serve``)
  embeds a passage the first time it is among the top candidates only.
- :meth:`SentenceVectors.best_similarities` gives each passage its best sentence's
  cosine to the question vector (``None`` for a passage with no sentence).
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from klea_utils.stores._retrieval.pool_similarity import cosine
from langchain_core.documents import Document

if TYPE_CHECKING:  # a keyword-only query never imports the embedding machinery
    from langchain_core.embeddings import Embeddings

__all__ = [
    "CACHE_PASSAGES",
    "MAX_SENTENCES",
    "MIN_WORDS",
    "SentenceVectors",
    "passage_sentences",
]

MIN_WORDS = 3
"""Fewest words a sentence must have to be embedded (shorter ones are layout residue)."""

MAX_SENTENCES = 40
"""Most sentences of one passage that are embedded (the first ones)."""

CACHE_PASSAGES = 2048
"""Passages whose sentence vectors :class:`SentenceVectors` keeps."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def passage_sentences(text: str, headings: Sequence[str] = ()) -> list[str]:
    """The sentences of ``text`` that are embedded, in order (see the module's description).

    A line of ``text`` that is one of ``headings`` (the chunk's heading chain) is left
    out: every chunk of its section opens with it, so it says nothing about the place.
    """
    skipped = {" ".join(h.split()) for h in headings}
    found: list[str] = []
    for line in text.splitlines():
        line = " ".join(line.split())
        if not line or line in skipped:
            continue
        for sentence in _SENTENCE_END.split(line):
            if len(sentence.split()) >= MIN_WORDS:
                found.append(sentence)
            if len(found) == MAX_SENTENCES:
                return found
    return found


def _headings(doc: Document) -> list[str]:
    value = doc.metadata.get("headings")
    return [str(h) for h in value] if isinstance(value, list) else []


class SentenceVectors:
    """Sentence vectors of passages, embedded once per passage text; safe between threads.

    Args:
        embeddings: The embedder of the library's vector stores (its question vectors
            are compared with these).
        size: Passages whose vectors are kept (least recently used go first).
    """

    def __init__(self, embeddings: Embeddings, size: int = CACHE_PASSAGES) -> None:
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        self.embeddings = embeddings
        self.size = size
        self._kept: OrderedDict[str, tuple[tuple[float, ...], ...]] = OrderedDict()
        self._lock = threading.Lock()

    def vectors(self, docs: Sequence[Document]) -> list[tuple[tuple[float, ...], ...]]:
        """Each passage's sentence vectors (empty for a passage with no sentence)."""
        with self._lock:
            known = {d.page_content: self._kept.get(d.page_content) for d in docs}
        missing = [d for d in docs if known[d.page_content] is None]
        sentences = {
            d.page_content: passage_sentences(d.page_content, _headings(d)) for d in missing
        }
        flat = [s for text in dict.fromkeys(sentences) for s in sentences[text]]
        embedded = iter(self.embeddings.embed_documents(flat) if flat else [])
        for text in dict.fromkeys(sentences):
            known[text] = tuple(tuple(float(x) for x in next(embedded)) for _ in sentences[text])
        with self._lock:
            for text, vectors in known.items():
                if vectors is not None:
                    self._kept[text] = vectors
                    self._kept.move_to_end(text)
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return [known[d.page_content] or () for d in docs]

    def similarities_to(
        self, query_vector: Sequence[float], log: logging.Logger
    ) -> Callable[[Sequence[Document]], list[float | None]]:
        """:meth:`best_similarities` to ``query_vector`` as the focus asks for it: a
        passage list whose sentences cannot be embedded gets no scores (logged), and the
        focus then reads the passages as they were."""

        def best(docs: Sequence[Document]) -> list[float | None]:
            try:
                return self.best_similarities(query_vector, docs)
            except Exception as exc:
                log.warning("sentences not embedded for re-scoring: %s", exc)
                return [None] * len(docs)

        return best

    def best_similarities(
        self, query_vector: Sequence[float], docs: Sequence[Document]
    ) -> list[float | None]:
        """Each passage's best sentence cosine to ``query_vector`` (``None``: no sentence)."""
        return [
            max((cosine(query_vector, v) or 0.0 for v in vectors), default=None)
            for vectors in self.vectors(docs)
        ]
