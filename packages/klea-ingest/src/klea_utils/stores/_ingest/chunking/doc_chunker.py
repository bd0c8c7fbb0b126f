"""Token-aware chunks of a ``DoclingDocument``, following its structure.

The walk, the split between items and the merge are those of Docling's ``HybridChunker``,
and on documents whose items fit the budget the chunks are the same
(``tests/test_doc_chunker.py`` compares the two on generated documents and real papers):

1. **Walk.** Items are visited in reading order. A title or section header opens a level
   of the heading chain and closes the deeper ones; every other item (a paragraph, a whole
   list, a table with its caption, a picture's caption, code, a formula) becomes one
   chunk, serialized as Docling's chunking serializer does (Markdown, images left out,
   tables as ``row, column = value`` triplets) and carrying the current heading chain.
2. **Split by items.** A chunk of several items (a list) that does not fit is cut
   between items into the longest runs that fit.
3. **Split text.** A chunk still over the budget is cut by
   :func:`~klea_utils.stores._ingest.chunking.text_segments.segment_text`: whole sentences packed
   into pieces that fit, a sentence cut at clauses (then words) only when it alone is over
   the budget, and optionally the last sentences of a piece repeated at the start of the
   next (``overlap_sentences``). Room is left for the chunk's headings; if the headings
   alone leave no room, they are dropped from that chunk. A table is cut between its
   lines instead, then long lines as text, and every piece opens with the table's
   caption and header row (:mod:`~klea_utils.stores._ingest.chunking.table_pieces`).
4. **Merge peers.** Neighbouring chunks under the same heading chain are joined while
   the result fits.

A chunk's embedded text is its heading chain, one heading per line, then its text
(``contextualize``); budgets count that text.

Why not ``HybridChunker`` itself: importing it imports transformers and so torch (its
package imports a Hugging Face tokenizer module), which costs a conversion worker about
4 CPU-seconds of start-up on every fresh process, most of a worker's start-up on a
model-free PDF run. This module needs only ``docling_core``'s document types and Markdown
serializer and a :class:`~klea_utils.stores._ingest.chunking.token_counter.TokenCounter`.

Two differences, on purpose (``docs/decisions.md``, "Chunker"): text over the budget is
cut at sentence ends, where ``HybridChunker``'s ``semchunk`` fills the budget and so
often cut a sentence at a comma or between words, the piece holding an answer starting
mid-sentence while the words that lead to it sat in the piece before; and a table over
the budget is cut between its caption and triplet lines, which are kept whole where they
fit (Docling cuts such a table by token count and glues its lines without a separator),
each piece repeating the caption and the header row so that a cell is read with the names
of its row and column.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from klea_utils.stores._ingest.chunking.table_pieces import is_row_table, table_segments
from klea_utils.stores._ingest.chunking.text_segments import segment_text
from klea_utils.stores._ingest.chunking.token_counter import TokenCounter

__all__ = ["RawChunk", "StructureChunker", "chunk_pages"]

_WORD = re.compile(r"\w+")

_DELIM = "\n"

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RawChunk:
    """A chunk before normalisation: its text, heading chain and the items it came from."""

    text: str
    headings: tuple[str, ...] | None
    items: tuple[Any, ...]

    def contextualized(self) -> str:
        """The embedded text: each heading on its own line, then the chunk's text."""
        return _DELIM.join([*(self.headings or ()), self.text])


def _cell(value: Any) -> str:
    return str(value).strip()


def table_triplets(rows: list[list[Any]], header: list[Any]) -> str:
    """A table as ``row label, column label = value`` sentences joined by ``". "``.

    ``header`` names the columns (Docling numbers them when the table has no header row);
    the first column labels the rows. A one-column table reads ``first cell = value``; a
    header-only table its header cells; a table whose triplets are all empty its non-empty
    cells in reading order.
    """
    if not rows:
        return ". ".join(text for text in map(_cell, header) if text)
    if len(header) == 1:
        name = _cell(rows[0][0])
        values = [_cell(row[0]) for row in rows[1:]]
        text = ". ".join(f"{name} = {value}" for value in values) if values else name
    else:
        grid = [list(header), *rows]
        row_labels = [_cell(row[0]) for row in grid]
        column_labels = [_cell(value) for value in grid[0]]
        text = ". ".join(
            f"{row_labels[i]}, {column_labels[j]} = {_cell(grid[i][j])}"
            for i in range(1, len(grid))
            for j in range(1, len(header))
        )
    return text or ". ".join(text for row in rows for text in map(_cell, row) if text)


@functools.cache
def _triplet_table_serializer() -> Any:
    """A Docling table serializer writing :func:`table_triplets` after the caption."""
    from docling_core.transforms.serializer.base import BaseTableSerializer, SerializationResult
    from docling_core.transforms.serializer.common import create_ser_result

    class TripletTables(BaseTableSerializer):
        def serialize(
            self, *, item: Any, doc_serializer: Any, doc: Any, **kwargs: Any
        ) -> SerializationResult:
            parts = []
            caption = doc_serializer.serialize_captions(item=item, **kwargs)
            if caption.text:
                parts.append(caption)
            if item.self_ref not in doc_serializer.get_excluded_refs(**kwargs):
                frame = item.export_to_dataframe(doc=doc)
                if frame.shape[1] >= 1:
                    text = table_triplets(frame.values.tolist(), list(frame.columns))
                    if text:
                        parts.append(create_ser_result(text=text, span_source=item))
            return create_ser_result(text="\n\n".join(p.text for p in parts), span_source=parts)

    return TripletTables()


def _serializer(document: Any) -> Any:
    """Docling's Markdown serializer with the chunking settings and triplet tables."""
    from docling_core.transforms.serializer.markdown import MarkdownDocSerializer, MarkdownParams
    from docling_core.types.doc.base import ImageRefMode

    params = MarkdownParams(
        image_mode=ImageRefMode.PLACEHOLDER,
        image_placeholder="",
        escape_underscores=False,
        escape_html=False,
    )
    return MarkdownDocSerializer(
        doc=document, table_serializer=_triplet_table_serializer(), params=params
    )


class StructureChunker:
    """Cuts documents into :class:`RawChunk` objects of at most ``max_tokens`` tokens.

    Args:
        counter: Counts tokens (the embedding model's tokenizer).
        max_tokens: Budget of a chunk's contextualized text.
        merge_peers: Join neighbouring chunks under the same headings while they fit.
        overlap_sentences: Whole sentences that end a piece of a split text and are
            repeated at the start of the next piece (as many as fit; 0: none).
    """

    def __init__(
        self,
        counter: TokenCounter,
        *,
        max_tokens: int,
        merge_peers: bool,
        overlap_sentences: int = 0,
    ) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        if overlap_sentences < 0:
            raise ValueError(f"overlap_sentences must be >= 0, got {overlap_sentences}")
        self.counter = counter
        self.max_tokens = max_tokens
        self.merge_peers = merge_peers
        self.overlap_sentences = overlap_sentences

    def warm_up(self) -> None:
        """Import what chunking needs (Docling's document types and serializer)."""
        from docling_core.types.doc.document import DoclingDocument

        self.chunk(DoclingDocument(name="warm-up"))
        self.counter.count("warm up")

    def chunk(
        self, document: Any, section_titles: Mapping[int, str] | None = None
    ) -> list[RawChunk]:
        """The chunks of ``document`` in reading order.

        ``section_titles`` (page -> a running head that titles the part of the document
        the page is in) joins the heading chain of each chunk whose text starts on that
        page, after the document's title, unless the chain already holds it.
        """
        serializer = _serializer(document)
        chunks = [
            piece
            for walked in self._walk(document, serializer, section_titles)
            for split in self._split_by_items(walked, serializer)
            for piece in self._split_text(split)
        ]
        return self._merge(chunks) if self.merge_peers else chunks

    def _fits(self, chunk: RawChunk) -> bool:
        return self.counter.count(chunk.contextualized()) <= self.max_tokens

    def _walk(
        self, document: Any, serializer: Any, section_titles: Mapping[int, str] | None = None
    ) -> list[RawChunk]:
        from docling_core.types.doc.items.group import InlineGroup, ListGroup
        from docling_core.types.doc.items.node import DocItem
        from docling_core.types.doc.items.text import SectionHeaderItem, TitleItem

        headings: dict[int, str] = {}
        visited: set[str] = set()
        excluded = serializer.get_excluded_refs()
        chunks: list[RawChunk] = []
        for item, _ in document.iterate_items(
            with_groups=True,
            traverse_pictures=serializer.params.traverse_pictures,
            included_content_layers=serializer.params.layers,
        ):
            # _skip_in_walk is the serializer's own rule (content inside a caption is printed
            # with the caption); private in docling_core, pinned by uv.lock, and covered by
            # the comparison with HybridChunker in tests/test_doc_chunker.py.
            if item.self_ref in excluded or serializer._skip_in_walk(node=item, root=None):
                continue
            if isinstance(item, TitleItem | SectionHeaderItem):
                level = item.level if isinstance(item, SectionHeaderItem) else 0
                for deeper in [k for k in headings if k >= level]:
                    del headings[deeper]
                headings[level] = item.text
                continue
            if not isinstance(item, ListGroup | InlineGroup | DocItem) or item.self_ref in visited:
                continue
            result = serializer.serialize(item=item, visited=visited)
            items = tuple(span.item for span in result.spans)
            if result.text and items:
                chain = tuple(headings[k] for k in sorted(headings)) or None
                pages = chunk_pages(items)
                title = section_titles and pages and section_titles.get(pages[0])
                if title:
                    chain = _with_section_title(chain, title, 0 in headings)
                chunks.append(RawChunk(result.text, chain, items))
        return chunks

    def _split_by_items(self, chunk: RawChunk, serializer: Any) -> list[RawChunk]:
        """Cut a chunk of several items between items into the longest runs that fit."""
        if len(chunk.items) <= 1:
            return [chunk]
        from docling_core.types.doc.items.text import SectionHeaderItem, TitleItem

        headers = TitleItem | SectionHeaderItem
        texts = [
            "" if isinstance(item, headers) else serializer.serialize(item=item).text
            for item in chunk.items
        ]

        def window(first: int, last: int) -> RawChunk:
            text = _DELIM.join(t for t in texts[first : last + 1] if t)
            return RawChunk(text, chunk.headings, chunk.items[first : last + 1])

        pieces: list[RawChunk] = []
        first = 0
        while first < len(texts):
            last = first
            while last + 1 < len(texts) and self._fits(window(first, last + 1)):
                last += 1
            pieces.append(window(first, last))
            first = last + 1
        return pieces

    def _split_text(self, chunk: RawChunk) -> list[RawChunk]:
        """Cut a chunk over the budget into segments that fit with its headings."""
        total = self.counter.count(chunk.contextualized())
        if total <= self.max_tokens:
            return [chunk]
        room = self.max_tokens - (total - self.counter.count(chunk.text))
        while room > 0:
            pieces = [replace(chunk, text=s) for s in self._segments(chunk, room)]
            overflow = max(self.counter.count(p.contextualized()) for p in pieces) - self.max_tokens
            if overflow <= 0:
                return pieces
            room -= overflow
        if chunk.headings is not None:
            _log.debug(
                "The headings of a chunk leave no room for its text within %d tokens; "
                "it is stored without them: %s",
                self.max_tokens,
                " > ".join(chunk.headings)[:200],
            )
            return self._split_text(replace(chunk, headings=None))
        return [replace(chunk, text=s) for s in self._segments(chunk, self.max_tokens)]

    def _segments(self, chunk: RawChunk, room: int) -> list[str]:
        from docling_core.types.doc.items.table.table import TableItem

        if len(chunk.items) == 1:
            docling_table = isinstance(chunk.items[0], TableItem)
            if docling_table or is_row_table(chunk.text):
                return table_segments(
                    chunk.text, room, self.counter.count, self._cut_line, triplets=docling_table
                )
        return segment_text(chunk.text, room, self.counter.count, overlap=self.overlap_sentences)

    def _cut_line(self, line: str, room: int) -> list[str]:
        return segment_text(line, room, self.counter.count)

    def _merge(self, chunks: list[RawChunk]) -> list[RawChunk]:
        """Join neighbouring chunks with the same heading chain while the result fits."""

        def joined(first: int, last: int) -> RawChunk:
            run = chunks[first : last + 1]
            items = tuple(item for chunk in run for item in chunk.items)
            return RawChunk(_DELIM.join(c.text for c in run), run[0].headings, items)

        merged: list[RawChunk] = []
        first = 0
        while first < len(chunks):
            last = first
            while (
                last + 1 < len(chunks)
                and chunks[last + 1].headings == chunks[first].headings
                and self._fits(joined(first, last + 1))
            ):
                last += 1
            merged.append(chunks[first] if last == first else joined(first, last))
            first = last + 1
        return merged


def chunk_pages(doc_items: Any) -> tuple[int, int] | None:
    """First and last page (1-based) of a chunk's items, ``None`` without provenance."""
    pages = [
        prov.page_no
        for item in doc_items or []
        for prov in (getattr(item, "prov", None) or [])
        if isinstance(getattr(prov, "page_no", None), int)
    ]
    return (min(pages), max(pages)) if pages else None


def _words(text: str) -> set[str]:
    """``text``'s words, folded: "1. Introduction" says "1 INTRODUCTION"."""
    return set(_WORD.findall(text.casefold()))


def _with_section_title(
    chain: tuple[str, ...] | None, title: str, has_document_title: bool
) -> tuple[str, ...]:
    """``chain`` with the lines of ``title`` after the document's title (first when it has
    none), each unless the chain's headings already hold all its words (a spread's two
    heads on one line, "6.1 Choice Strategies 6 SYNTHETIC DATA", under those sections)."""
    headings = chain or ()
    said = set().union(*(_words(h) for h in headings))
    new = [
        line
        for line in dict.fromkeys(" ".join(t.split()) for t in title.split("\n"))
        if line and not _words(line) <= said
    ]
    at = 1 if has_document_title and headings else 0
    return (*headings[:at], *new, *headings[at:])
