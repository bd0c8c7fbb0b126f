"""Tables over the chunk budget: every piece reads as the table (caption, header, rows)."""

from __future__ import annotations

import logging
import re
from functools import cache
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.chunking.doc_chunker import StructureChunker
from klea_utils.stores._ingest.chunking.table_pieces import is_row_table, table_segments
from klea_utils.stores._ingest.chunking.text_segments import segment_text
from klea_utils.stores._ingest.chunking.token_counter import TokenCounter, load_token_counter
from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline
from klea_utils.stores.packaged_minilm import packaged_minilm_path
from realpapers import DATA, minilm_chunker, needs_data, needs_wild, wild_page

CAPTION = "Table 4: Harvested yield by brand, 2012 trial."
HEADER = "Brand | Product | Yield Bu/A | Moisture %"


@cache
def _counter() -> TokenCounter:
    return load_token_counter(str(packaged_minilm_path()), logging.getLogger("test"))


def _count(text: str) -> int:
    return _counter().count(text)


def _cut(line: str, room: int) -> list[str]:
    return segment_text(line, room, _count)


def _rows(n: int) -> list[str]:
    return [f"Brand{i} | P-{i}0{i} | {50 + i}.4 | {7 + i % 3}.{i % 10}" for i in range(n)]


def _pieces(text: str, room: int) -> list[str]:
    return table_segments(text, room, _count, _cut, triplets=False)


def test_every_piece_opens_with_the_caption_and_the_header_row() -> None:
    rows = _rows(40)
    pieces = _pieces("\n".join([CAPTION, HEADER, *rows]), 80)
    assert len(pieces) > 3
    for piece in pieces:
        lines = piece.split("\n")
        assert lines[:2] == [CAPTION, HEADER]
        assert _count(piece) <= 80
    body = [line for piece in pieces for line in piece.split("\n")[2:]]
    assert body == rows  # every row once, in order


def test_a_caption_printed_under_the_rows_leads_every_piece() -> None:
    rows = _rows(30)
    pieces = _pieces("\n".join([HEADER, *rows, CAPTION]), 80)
    assert all(piece.split("\n")[:2] == [CAPTION, HEADER] for piece in pieces)
    assert [ln for p in pieces for ln in p.split("\n")[2:]] == rows


def test_a_lead_too_long_for_the_room_is_read_once_not_repeated() -> None:
    caption = "Table 2: " + " ".join(["a long caption that says a great deal"] * 6)
    rows = _rows(30)
    pieces = _pieces("\n".join([caption, HEADER, *rows]), 80)
    # the caption takes over a third of the room: only the header repeats
    assert pieces[0].split("\n")[:2] == [HEADER, caption] or pieces[0].startswith(HEADER)
    assert all(piece.startswith(HEADER + "\n") for piece in pieces)
    assert sum(caption in piece for piece in pieces) == 1
    assert all(_count(piece) <= 80 for piece in pieces)


def test_a_caption_set_inside_the_rows_leads_with_its_first_sentence() -> None:
    # the model-free path reads a caption set within the table's frame as one of its rows
    caption = (
        "Table 3 | Comparison among the base models. All models are evaluated in one "
        "framework. Scores within 0.3 are at the same level."
    )
    rows = _rows(40)
    pieces = _pieces("\n".join([HEADER, caption, *rows]), 90)
    assert len(pieces) > 2
    for piece in pieces:
        assert piece.split("\n")[:2] == ["Table 3 Comparison among the base models.", HEADER]
    rest = "All models are evaluated in one framework. Scores within 0.3 are at the same level."
    assert sum(rest in piece for piece in pieces) == 1  # the rest of the caption, read once
    assert [ln for p in pieces for ln in p.split("\n")[2:] if ln != rest] == rows


def test_a_caption_numbered_alone_reads_on_to_its_subject() -> None:
    pieces = _pieces("\n".join(["Table 7. Yields by brand.", HEADER, *_rows(40)]), 80)
    assert all(piece.startswith("Table 7. Yields by brand.\n" + HEADER) for piece in pieces)


def test_triplet_tables_repeat_their_caption() -> None:
    triplets = ". ".join(f"model {i}, Accuracy = 0.{i}1" for i in range(40))
    pieces = table_segments(f"{CAPTION}\n{triplets}", 60, _count, _cut, triplets=True)
    assert len(pieces) > 2
    assert all(piece.startswith(CAPTION + "\n") for piece in pieces)
    assert all(_count(piece) <= 60 for piece in pieces)
    joined = " ".join(pieces)
    assert all(f"model {i}, Accuracy = 0.{i}1" in joined for i in range(40))


def test_only_multi_line_text_with_cells_is_a_row_table() -> None:
    assert is_row_table(f"{CAPTION}\n{HEADER}\nA | 1 | 2 | 3")
    assert not is_row_table("One paragraph | with a bar | in it.")
    assert not is_row_table("Line one\nLine two\nLine three")


def test_the_chunker_cuts_a_model_free_table_item_with_its_lead() -> None:
    from docling_core.types.doc.document import DoclingDocument
    from docling_core.types.doc.labels import DocItemLabel

    doc = DoclingDocument(name="t")
    doc.add_heading(text="Results", level=1)
    rows = _rows(40)
    text = "\n".join([CAPTION, HEADER, *rows])
    doc.add_text(label=DocItemLabel.TEXT, text=text, orig=text)
    chunks = StructureChunker(_counter(), max_tokens=90, merge_peers=True).chunk(doc)
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.headings == ("Results",)
        assert chunk.text.split("\n")[:2] == [CAPTION, HEADER]
        assert _count(chunk.contextualized()) <= 90


_cell = st.text(alphabet="abcdefghij0123456789.%", min_size=1, max_size=12)


@st.composite
def _grids(draw: st.DrawFn) -> list[list[str]]:
    """Rows of one width (a table's columns): no second row reads as a stacked head."""
    width = draw(st.integers(min_value=2, max_value=6))
    row = st.lists(_cell, min_size=width, max_size=width)
    return draw(st.lists(row, min_size=2, max_size=40))


@given(_grids(), st.booleans(), st.integers(min_value=30, max_value=200))
def test_pieces_fit_keep_every_row_and_repeat_a_short_header(
    grid: list[list[str]], captioned: bool, room: int
) -> None:
    rows = [f"r{i} " + " | ".join(cells) for i, cells in enumerate(grid)]  # rows distinct
    lines = ([CAPTION] if captioned else []) + rows
    pieces = _pieces("\n".join(lines), room)
    assert pieces
    assert all(_count(piece) <= room for piece in pieces)
    lead = [ln for ln in (CAPTION, rows[0]) if all(ln in p.split("\n")[:2] for p in pieces)]

    def body(piece: str) -> str:  # a later piece without the lead it repeats
        lines_of_piece = piece.split("\n")
        return "\n".join(lines_of_piece[len(lead) :])

    words = "".join(" ".join([pieces[0], *map(body, pieces[1:])]).split())
    assert all("".join(row.split()) in words for row in rows)
    # a header row names a column with a word: a first row of numbers only is data
    names = any(c.strip() and not re.search(r"\d", c) for c in rows[0].split(" | "))
    header_fits = names and _count(rows[0]) <= room // 3
    with_caption = captioned and _count(f"{CAPTION}\n{rows[0]}") <= room // 3
    if header_fits and len(rows) > 2:
        assert all(piece.split("\n")[int(with_caption)] == rows[0] for piece in pieces)


def test_an_annex_numbered_caption_under_the_rows_leads_every_piece() -> None:
    caption = "Table K.6 \u2013 Table for chrominance AC coefficients (sheet 4 of 4)"
    rows = [f"F/{i:X} | 16 | 11111111111110{i % 4:02b}" for i in range(16)] * 3
    pieces = _pieces("\n".join([*rows, caption]), 60)
    assert len(pieces) > 2
    assert all(piece.split("\n")[0] == caption for piece in pieces)
    # the first row holds digits in every cell: data continued from the page before, so it
    # is not repeated as a header
    assert [ln for p in pieces for ln in p.split("\n")[1:]] == rows


def test_chapter_numbered_captions_are_captions() -> None:
    for caption in ("Table 4-1: Fees by year", "Table 2.3. Yields", "Table A.1 \u2013 Codes"):
        assert _pieces("\n".join([caption, HEADER, *_rows(30)]), 80)[-1].startswith(caption)
    assert not _pieces("\n".join(["Tablet 4: sizes", HEADER, *_rows(30)]), 80)[-1].startswith(
        "Tablet"
    )


def test_a_header_of_years_names_its_columns_with_a_word() -> None:
    header = "Region | 2019 | 2020"
    rows = [f"R{i} | {i}.1 | {i}.2" for i in range(60)]
    pieces = _pieces("\n".join([CAPTION, header, *rows]), 60)
    assert all(piece.split("\n")[:2] == [CAPTION, header] for piece in pieces)


# -- a real table: DeepSeek-V3's Table 3 (p. 25), heads set in two stacked lines ------------


@needs_data
def test_every_piece_of_a_real_cut_table_carries_its_stacked_column_heads(
    tmp_path: Path,
) -> None:
    # "Benchmark (Metric) # Shots DeepSeek-V2 Qwen2.5 LLaMA-3.1 DeepSeek-V3" over
    # "Base 72B Base 405B Base Base"; the first line's box reaches into the second's, and
    # the question names a cell by a model ("DeepSeek-V3-Base on CMath"), far down the rows
    assert DATA is not None
    page = wild_page("2412.19437_deepseek-v3.pdf", 24, tmp_path, data=DATA)
    document, _ = convert_pdf_offline(page, do_ocr=False)
    docs = minilm_chunker().chunk(document, file_name=page.name, file_hash="h")
    pieces = [d.page_content for d in docs if "| 5-shot |" in d.page_content]
    assert len(pieces) >= 3  # the table is cut
    heads = "Benchmark (Metric) | # Shots | DeepSeek-V2 | Qwen2.5 | LLaMA-3.1 | DeepSeek-V3"
    for piece in pieces:
        lines = piece.split("\n")
        assert heads in lines, piece[:300]
        assert lines[lines.index(heads) + 1] == "Base | 72B Base | 405B Base | Base"
        assert any(line.startswith("Table 3") for line in lines)
    cmath = [p for p in pieces if "CMath (EM) | 3-shot | 78.7 | 84.5 | 77.3 | 90.7" in p]
    assert len(cmath) == 1  # every row once
    # the heads left the paragraph above the table
    assert not any(heads.replace(" | ", " ") in d.page_content for d in docs)


@needs_wild
def test_a_numbered_heading_right_above_table_rows_stays_a_heading(tmp_path: Path) -> None:
    # IRM 2.3.59's contents page: "2.3.59.1  Program Scope and Objectives" over entries
    # whose gaps read as cells; two tight cells make no row of column heads
    page = wild_page("unstructured__pdf2image-memory-error-test-400p.pdf", 2, tmp_path)
    document, _ = convert_pdf_offline(page, do_ocr=False)
    headings = [i.text for i, _ in document.iterate_items() if i.label.value == "section_header"]
    assert "2.3.59.1 Program Scope and Objectives" in headings


def test_stacked_heads_lead_every_piece_and_prose_cells_do_not() -> None:
    heads = "Benchmark | Shots | Model-A | Model-B | Model-C"
    under = "Base | 7B Base | 70B Base"
    rows = [f"Task{i} | {i}-shot | {50 + i}.1 | {60 + i}.2 | {70 + i}.3" for i in range(40)]
    pieces = _pieces("\n".join([CAPTION, heads, under, *rows]), 160)
    assert len(pieces) > 3
    assert all(piece.split("\n")[:3] == [CAPTION, heads, under] for piece in pieces)
    prose = "expired and the rule | return if you were not required | will not apply now"
    pieces = _pieces("\n".join([heads, prose, *rows]), 90)
    assert all(prose not in piece.split("\n") for piece in pieces[1:])
    assert sum(prose in piece.split("\n") for piece in pieces) == 1
