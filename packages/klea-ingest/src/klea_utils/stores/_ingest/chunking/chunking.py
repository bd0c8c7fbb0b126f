"""Token-aware chunking of converted documents, and the chunk budget.

Chunks follow the document's structure with the rules of Docling's ``HybridChunker``
(:mod:`klea_utils.stores._ingest.chunking.doc_chunker` says why it is not imported) and are
counted with the embedding model's own tokenizer (:func:`tokenizer_for`): the packaged
MiniLM's for the default model, the model id or folder for other Hugging Face models,
``BAAI/bge-m3`` for Ollama models (whose tokenizer is not reachable). How a tokenizer is
found, and the fallback to the packaged MiniLM's, is
:mod:`klea_utils.stores._ingest.chunking.token_counter`'s job.

Every chunk carries ``page_start`` and ``page_end`` (1-based ints) when its items have page
provenance (PDFs), so a reader can cite the page, ``regions`` (its boxes on those pages,
:mod:`klea_utils.stores._ingest.chunking.chunk_regions`), and its place in the file:
``chunk_index`` (0, 1, 2... in reading order) and ``section_index`` (the same for a run of
neighbouring chunks under one heading chain), so a retriever can widen a hit with its
neighbours of the same section.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.chunking.chunk_regions import (
    REGIONS_KEY,
    chunk_regions,
    region_pages,
)
from klea_utils.stores._ingest.chunking.doc_chunker import StructureChunker, chunk_pages
from klea_utils.stores._ingest.chunking.language import LANGUAGE_KEY, detect_language
from klea_utils.stores._ingest.chunking.text_segments import segment_text
from klea_utils.stores._ingest.chunking.token_counter import (
    load_token_counter,
)
from klea_utils.stores.ingest_exceptions import ChunkBudgetError
from klea_utils.stores.packaged_minilm import packaged_minilm_path
from langchain_core.documents import Document

__all__ = [
    "CHUNKING_VERSION",
    "CHUNK_INDEX_KEY",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_OVERLAP_SENTENCES",
    "MINILM_MAX_TOKENS",
    "OLLAMA_TOKENIZER",
    "PAGE_LABEL_KEY",
    "SECTION_INDEX_KEY",
    "Chunker",
    "chunk_pages",
    "chunking_settings",
    "embedding_max_tokens",
    "resolve_max_tokens",
    "tokenizer_for",
]

DEFAULT_MAX_TOKENS = 450
"""Chunk budget when the embedding model reads at least this many tokens (bge-m3 does)."""

DEFAULT_OVERLAP_SENTENCES = 0
"""Sentences repeated from the end of a cut text at the start of its next piece."""

CHUNKING_VERSION = 13
"""Version of the chunking rules, part of the cache key (2: text cut at sentence ends; 3: a
table cut into pieces repeats its caption and header row in each; 4: PDF chunks carry
``regions``, their boxes on the page, and ``page_label``; every chunk carries its
``language``; reference lines that open with an arXiv id are kept, no longer dropped as
arXiv's margin stamp; 5: a table caption numbered within an annex or chapter, "Table K.6 -",
"Table 4-1:", leads every piece, and a first row whose every cell holds a digit is data,
not a header to repeat; a chunk of a page read without geometry (by pypdf) has the whole
page as its region instead of none; a lone folio on a bare page-number line is a
``page_label``; 6: a running head that titles a run of pages, not the whole document,
joins the heading chain of the chunks starting on those pages; 7: glyphs wholly outside the
page box are no text of the page, a table keeps the boxes of the caption printed above it,
and each table row's box names that row's text; 8: no blank is put between a fullwidth
digit or letter and the Han or Kana glyph it touches, ``１回`` no longer ``１ 回``; a title
block goes on over a line set a little smaller or one broken mid-phrase and takes a lone
article above it, so the title opening every chunk's heading path can change, and cached
files read their metadata again, now with the byline under the title); 9: digits printed
raised right after a word or a closing mark are written in superscript digits
(``before³``, ``space¹,²``: the superscript citation style's callouts and footnote marks,
no longer ``before3``); a heading beside the title, in the next column on its row, no
longer joins the title block; and cached files
read their metadata again: no title from a row of table column heads, a running head or a
numbered copyright line; a Han-script byline under a title; a year from an edition
statement, or the year a title names where page one states none; 10: a Latin word with a
comma, backslash, brace, bar or tilde between its letters, or brackets the wrong way round,
is a look-alike of another script's glyphs, so a Cyrillic page read as ``PaJ,Qen`` and
``HMYLL\\eCTBO`` by an old OCR layer is read again by tesseract; 11: a line set smaller
than the title joins its block only within 0.9 em of the title's size under it, and the
lines right under a one-word title, set above the body size, finish it (``Russia`` /
``Democracy Assessment: ...``), so the title opening every chunk's heading path can
change; cached files read their metadata again: a title must read as words, letter-spaced
heads are closed up, ``Prepared by`` names, a lone cover year; no blank is put between a
digit and the point or comma after it unless it is as wide as between two numbers,
``1.3`` no longer ``1 .3``; 12: a standard's designation (``CCITT T.81``) is no title, and
on a cover that prints one the title may start in the lower half; a smaller kicker line
ending on a linking word right above the title opens it (``UPDATED RECOMMENDATIONS ON``),
a title line ending on a year closes the title block (``... 2014`` over a sheet's
head), so the title opening every chunk's heading path can change; cached files read their
metadata again: OCR specks of two words and unpaired brackets, a paragraph's line in Han
or kana and a print header (``Page 1 sur 1``) are no title, a trailing ``2.3.59`` is no
part of one, a standard's ``(09/92)`` is its year and a superseded document's date is
not; where no source gives a title, the topmost heading in the top 30% of page one is
the title, on a scanned page only when it is clean words; and a table's column heads set
in stacked lines, the first touching the row under it, are the table's header, and every
piece of a cut table repeats all of its header lines, not the first only; and a zero-width
non-joiner after an Arabic-script letter is a space in the chunk's text, no longer
removed, so a Persian compound's two words (``کتاب\u200cها``) stay two words; 13: in a
right-to-left line, a blank pdfium placed between two touching glyphs is dropped, so the
shaped Arabic and Persian a browser prints to PDF reads ``حقوق``, no longer ``ح قوق``)."""

PAGE_LABEL_KEY = "page_label"
"""Chunk metadata key of the page number printed on the chunk's page(s)."""

CHUNK_INDEX_KEY = "chunk_index"
"""Metadata key of a chunk's position in its file (0-based, reading order)."""

SECTION_INDEX_KEY = "section_index"
"""Metadata key shared by a run of neighbouring chunks under one heading chain."""

OLLAMA_TOKENIZER = "BAAI/bge-m3"
"""Tokenizer used to count chunks for Ollama models, whose own tokenizer is not reachable."""

MINILM_MAX_TOKENS = 256
"""Word pieces all-MiniLM-L6-v2 reads; text past this is truncated by the embedder."""


def embedding_max_tokens(embedding_model: str) -> int | None:
    """Return how many tokens the embedding model reads, when it can be told offline.

    MiniLM models read 256; a local sentence-transformers folder states its
    ``max_seq_length``; anything else is unknown (``None``). ``use:multilingual-v3`` reads
    any length, but its chunks are cut as the packaged MiniLM's (:func:`tokenizer_for`), so
    a library's chunks and their cache do not depend on which of the two embeds them.
    """
    if "minilm" in embedding_model.lower() or _is_use(embedding_model):
        return MINILM_MAX_TOKENS
    location = embedding_model.split(":", 1)[-1]
    config = Path(location) / "sentence_bert_config.json"
    try:
        return int(json.loads(config.read_text(encoding="utf-8"))["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def tokenizer_for(embedding_model: str) -> str:
    """Return the tokenizer that counts chunks for ``embedding_model`` (``provider:model``).

    The packaged MiniLM resolves to its folder (offline); another Hugging Face model to
    its id or path; an Ollama model to :data:`OLLAMA_TOKENIZER`; ``use:multilingual-v3``,
    whose SentencePiece pieces are no budget anyone reads, to the packaged MiniLM's (offline).
    """
    provider, _, model = embedding_model.partition(":")
    if _is_use(embedding_model):
        provider, model = "huggingface", "all-MiniLM-L6-v2"
    if provider != "huggingface" or not model:
        return OLLAMA_TOKENIZER
    if model.endswith(":local"):
        model = model[: -len(":local")]
    if model.split("/")[-1].lower() == "all-minilm-l6-v2":
        try:
            return str(packaged_minilm_path())
        except ImportError:
            return "sentence-transformers/all-MiniLM-L6-v2"
    return model


def _is_use(embedding_model: str) -> bool:
    return embedding_model.partition(":")[0] == "use"


def resolve_max_tokens(embedding_model: str, max_tokens: int | None, *, force: bool = False) -> int:
    """The chunk budget: ``max_tokens``, or the model's limit capped at 450 when ``None``.

    Raises:
        ValueError: ``max_tokens`` is below 1.
        ChunkBudgetError: (a ``ValueError``) ``max_tokens`` is above what the embedding
            model reads and ``force`` is false (one line naming both numbers).
    """
    limit = embedding_max_tokens(embedding_model)
    if max_tokens is None:
        return min(DEFAULT_MAX_TOKENS, limit) if limit is not None else DEFAULT_MAX_TOKENS
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    if limit is not None and max_tokens > limit and not force:
        raise ChunkBudgetError(
            f"max_tokens={max_tokens} is more than the {limit} tokens the embedding model "
            f"{embedding_model!r} reads (the rest of each chunk would be cut when embedded); "
            f"use at most {limit}, or force it (--force-max-tokens, force_max_tokens=True)"
        )
    return max_tokens


def chunking_settings(
    *, max_tokens: int, merge_peers: bool, tokenizer_model: str, overlap_sentences: int
) -> dict[str, Any]:
    """The settings that decide a file's chunks; the chunk cache keys its entries on them.

    A tokenizer folder counts by its name, so a moved environment keeps its cache.
    """
    folder = Path(tokenizer_model)
    return {
        "rules": CHUNKING_VERSION,
        "max_tokens": max_tokens,
        "merge_peers": merge_peers,
        "overlap_sentences": overlap_sentences,
        "tokenizer": folder.name if folder.is_dir() else tokenizer_model,
    }


class Chunker:
    """Chunks ``DoclingDocument`` objects into LangChain ``Document`` chunks.

    Args:
        max_tokens: Token budget per chunk (its headings included).
        merge_peers: Merge undersized chunks that share headings.
        tokenizer_model: Hugging Face tokenizer id or folder (fallback: packaged MiniLM).
        logger: Receives fallback warnings.
        overlap_sentences: Sentences that end a piece of a cut text repeated at the start
            of the next piece.
    """

    def __init__(
        self,
        *,
        max_tokens: int,
        merge_peers: bool,
        tokenizer_model: str,
        logger: logging.Logger,
        overlap_sentences: int = DEFAULT_OVERLAP_SENTENCES,
    ) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        self.max_tokens = max_tokens
        self.counter = load_token_counter(tokenizer_model, logger)
        self._chunker = StructureChunker(
            self.counter,
            max_tokens=max_tokens,
            merge_peers=merge_peers,
            overlap_sentences=overlap_sentences,
        )

    def warm_up(self) -> None:
        """Import what chunking needs now rather than on the first document."""
        self._chunker.warm_up()

    def count_tokens(self, text: str) -> int:
        """How many tokens of the chunking tokenizer ``text`` is."""
        return self.counter.count(text)

    def _fit(self, text: str, body: str) -> list[str]:
        """``text`` cut at sentence ends (then clauses, words) so no piece exceeds the budget.

        Normalisation can change a chunk's count by a few tokens after it was cut; the
        embedder would cut those, so the chunk is split instead, each piece keeping the
        heading lines that prefix ``body``.
        """
        if self.count_tokens(text) <= self.max_tokens:
            return [text]
        prefix = text[: len(text) - len(body)] if body and text.endswith(body) else ""
        room = self.max_tokens - self.count_tokens(prefix)
        if room < 1:
            prefix, room = "", self.max_tokens
            body = text
        return [prefix + piece for piece in segment_text(body, room, self.count_tokens)]

    def chunk(
        self,
        document: Any,
        *,
        file_name: str,
        file_hash: str,
        page_labels: Mapping[int, str] | None = None,
        section_titles: Mapping[int, str] | None = None,
    ) -> list[Document]:
        """Return the chunks of ``document`` with ``file_name``, ``file_hash``, ``headings``.

        PDF chunks also carry ``page_start`` and ``page_end`` (1-based ints), ``regions``
        and, where ``page_labels`` (page -> label) knows them, ``page_label``: the label of
        the first page, or ``"first-last"`` labels for a chunk across pages. Every chunk
        carries :data:`CHUNK_INDEX_KEY`, :data:`SECTION_INDEX_KEY` and ``language`` (the
        ISO 639-1 code of its own text, ``und`` when it cannot be told; see
        :func:`~klea_utils.stores._ingest.chunking.language.detect_language`).

        ``section_titles`` (page -> the running head that titles the part of the
        document the page is in) joins the heading chain of the chunks that start on that
        page, after the document's title, unless the chain already holds it.

        ``page_content`` is the contextualized text (heading chain, then the chunk's text)
        passed through ``normalize_text``; ``headings`` lists the heading chain, most
        specific last.
        """
        from klea_utils.stores.utils import normalize_text

        docs: list[Document] = []
        section = -1
        chain: object = object()
        heights = _page_heights(document)
        whole_pages = _whole_pages(document)
        for chunk in self._chunker.chunk(document, section_titles):
            text = normalize_text(chunk.contextualized()).strip()
            if not text:
                continue
            pieces = self._fit(text, normalize_text(chunk.text).strip())
            metadata: dict[str, Any] = {
                "file_name": file_name,
                "file_hash": file_hash,
                "headings": [normalize_text(h) for h in chunk.headings or ()],
            }
            if metadata["headings"] != chain:
                chain, section = metadata["headings"], section + 1
            metadata[SECTION_INDEX_KEY] = section
            pages = chunk_pages(chunk.items)
            if pages is not None:
                metadata["page_start"], metadata["page_end"] = pages
            regions = chunk_regions(chunk.items, chunk.text, heights, whole_pages)
            for piece in pieces:
                if len(pieces) > 1:
                    body = _without_headings(piece, metadata["headings"])
                    regions = chunk_regions(chunk.items, body, heights, whole_pages)
                extra: dict[str, Any] = {REGIONS_KEY: regions} if regions else {}
                narrowed = region_pages(chunk.items, regions)
                if narrowed is not None:  # a piece of a paragraph may lie on one page of two
                    extra["page_start"], extra["page_end"] = narrowed
                label = _page_label(narrowed or pages, page_labels)
                if label:
                    extra[PAGE_LABEL_KEY] = label
                extra[LANGUAGE_KEY] = detect_language(piece)
                docs.append(
                    Document(
                        page_content=piece,
                        metadata={**metadata, **extra, CHUNK_INDEX_KEY: len(docs)},
                    )
                )
        return docs


def _page_label(pages: tuple[int, int] | None, labels: Mapping[int, str] | None) -> str:
    """``"1234"``, or ``"1234-1235"`` for a chunk across pages; ``""`` when unknown."""
    if pages is None or not labels:
        return ""
    first, last = labels.get(pages[0], ""), labels.get(pages[1], "")
    if not first:
        return ""
    return first if pages[0] == pages[1] or not last or last == first else f"{first}-{last}"


def _page_heights(document: Any) -> dict[int, float]:
    """Each page's height (points) of a ``DoclingDocument``, for boxes measured from the top."""
    heights: dict[int, float] = {}
    for number, page in (getattr(document, "pages", None) or {}).items():
        size = getattr(page, "size", None)
        if isinstance(number, int) and size is not None:
            heights[number] = float(size.height)
    return heights


def _whole_pages(document: Any) -> dict[int, list[float]]:
    """Each page's whole box, ``[0, 0, width, height]`` (points) of a ``DoclingDocument``:
    the region of a chunk whose provenance names its page but no box."""
    boxes: dict[int, list[float]] = {}
    for number, page in (getattr(document, "pages", None) or {}).items():
        size = getattr(page, "size", None)
        if isinstance(number, int) and size is not None and size.width > 0 and size.height > 0:
            boxes[number] = [0.0, 0.0, round(float(size.width), 2), round(float(size.height), 2)]
    return boxes


def _without_headings(piece: str, headings: list[str]) -> str:
    """A piece's own text: the heading lines that open it removed."""
    for heading in headings:
        if piece.startswith(heading + "\n"):
            piece = piece[len(heading) + 1 :]
    return piece
