"""A page of a library PDF as PNG with a passage's regions framed (issue 36).

The frame lands round the words the region names, whatever the page's ``/Rotate``:
regions are PDF user-space boxes and pdfium maps them to the rendered image. Library
files are handed out only by stored name and hash: unknown, moved and changed files
answer with reasons that name no path.
"""

from __future__ import annotations

import ctypes
import statistics
import time
import zlib
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as raw
import pytest
from klea_utils.stores.serve.papers.library_files import (
    LibraryFiles,
    PaperFileChangedError,
    PaperFileMissingError,
    _sha256,
)
from klea_utils.stores.serve.papers.page_image import (
    HIGHLIGHT,
    PageOutOfRangeError,
    page_png,
)

WORDS = ["Regions", "pin", "passages", "to", "the", "page"]


def _pdf(path: Path, rotate: int = 0) -> Path:
    """A letter page with one line of Helvetica at (72, 600), ``/Rotate rotate``."""
    pdf = pdfium.PdfDocument.new()
    page = pdf.new_page(612, 792)
    text = raw.FPDFPageObj_NewTextObj(pdf.raw, b"Helvetica", ctypes.c_float(24))
    value = (" ".join(WORDS) + "\x00").encode("utf-16-le")
    raw.FPDFText_SetText(text, ctypes.cast(value, ctypes.POINTER(raw.FPDF_WCHAR)))
    raw.FPDFPageObj_Transform(text, 1, 0, 0, 1, 72, 600)
    raw.FPDFPage_InsertObject(page.raw, text)
    raw.FPDFPage_GenerateContent(page.raw)
    page.set_rotation(rotate)
    page.close()
    pdf.save(str(path))
    pdf.close()
    return path


def _word_box(path: Path) -> list[float]:
    pdf = pdfium.PdfDocument(str(path))
    try:
        textpage = pdf[0].get_textpage()
        left, bottom, right, top = textpage.get_charbox(0)
        for index in range(1, textpage.count_chars()):
            box = textpage.get_charbox(index)
            left, bottom = min(left, box[0]), min(bottom, box[1])
            right, top = max(right, box[2]), max(top, box[3])
        return [left, bottom, right, top]
    finally:
        pdf.close()


def _pixels(png: bytes) -> tuple[int, int, bytes]:
    """Width, height and RGB rows of a PNG written by ``page_png`` (filter 0, one IDAT)."""
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    at = png.index(b"IDAT")
    size = int.from_bytes(png[at - 4 : at], "big")
    data = zlib.decompress(png[at + 4 : at + 4 + size])
    rows = b"".join(
        data[y * (width * 3 + 1) + 1 : (y + 1) * (width * 3 + 1)] for y in range(height)
    )
    return width, height, rows


def _framed(png: bytes) -> tuple[int, int, int, int, int, int]:
    """The box of the highlight-coloured pixels, and the image size."""
    width, height, rows = _pixels(png)
    colour = bytes(HIGHLIGHT)
    xs, ys = [], []
    for i in range(0, len(rows), 3):
        if rows[i : i + 3] == colour:
            xs.append((i // 3) % width)
            ys.append((i // 3) // width)
    assert xs, "no highlight drawn"
    return min(xs), min(ys), max(xs), max(ys), width, height


def _ink(png: bytes) -> tuple[int, int, int, int]:
    """The box of the dark pixels (the glyphs)."""
    width, _, rows = _pixels(png)
    xs, ys = [], []
    for i in range(0, len(rows), 3):
        if max(rows[i : i + 3]) < 100:
            xs.append((i // 3) % width)
            ys.append((i // 3) // width)
    assert xs, "no text rendered"
    return min(xs), min(ys), max(xs), max(ys)


@pytest.mark.parametrize("rotate", [0, 90, 180, 270])
def test_the_frame_surrounds_the_words_whatever_the_rotation(tmp_path: Path, rotate: int) -> None:
    path = _pdf(tmp_path / "page.pdf", rotate)
    box = _word_box(path)
    png = page_png(path, 1, dpi=72, regions=[{"page": 1, "bbox": box}])
    left, top, right, bottom, width, height = _framed(png)
    assert (width, height) == ((612, 792) if rotate % 180 == 0 else (792, 612))
    long_side, short_side = box[2] - box[0], box[3] - box[1]
    across, down = right - left, bottom - top
    if rotate % 180 == 0:  # the line runs across the image
        assert abs(across - long_side) < 12
        assert abs(down - short_side) < 12
    else:  # it runs down the image
        assert abs(down - long_side) < 12
        assert abs(across - short_side) < 12
    # the page's only ink is the line: every dark pixel lies inside the frame
    ink = _ink(png)
    assert left <= ink[0]
    assert top <= ink[1]
    assert ink[2] <= right
    assert ink[3] <= bottom


def test_regions_of_other_pages_are_not_drawn_and_plain_pages_render(tmp_path: Path) -> None:
    path = _pdf(tmp_path / "page.pdf")
    png = page_png(path, 1, dpi=72, regions=[{"page": 2, "bbox": [0, 0, 100, 100]}])
    _, _, rows = _pixels(png)
    assert bytes(HIGHLIGHT) not in {rows[i : i + 3] for i in range(0, len(rows), 3)}


def test_dpi_and_page_are_bounded(tmp_path: Path) -> None:
    path = _pdf(tmp_path / "page.pdf")
    with pytest.raises(ValueError, match="dpi must be 36-300"):
        page_png(path, 1, dpi=301)
    with pytest.raises(PageOutOfRangeError, match="pages 1-1, not 2"):
        page_png(path, 2)


def test_a_page_at_150_dpi_renders_quickly(tmp_path: Path) -> None:
    path = _pdf(tmp_path / "page.pdf")
    times = []
    for _ in range(5):
        started = time.perf_counter()
        page_png(path, 1, dpi=150, regions=[{"page": 1, "bbox": _word_box(path)}])
        times.append(time.perf_counter() - started)
    assert statistics.median(times) < 1.0  # target 0.3 s on the development machine


# -- library files ----------------------------------------------------------------------------


def test_a_library_file_is_found_by_stored_name_and_hash(tmp_path: Path) -> None:
    path = _pdf(tmp_path / "a.pdf")
    files = LibraryFiles(tmp_path, {"a.pdf": _sha256(path)}.get)
    assert files.path("a.pdf") == path.resolve()


@pytest.mark.parametrize("name", ["b.pdf", "../a.pdf", "/etc/passwd", "sub/a.pdf", "..", ""])
def test_only_names_the_stores_hold_are_served(tmp_path: Path, name: str) -> None:
    path = _pdf(tmp_path / "a.pdf")
    known = {"a.pdf": _sha256(path), "../a.pdf": _sha256(path), "sub/a.pdf": _sha256(path)}
    files = LibraryFiles(tmp_path, known.get)
    with pytest.raises(PaperFileMissingError) as caught:
        files.path(name)
    assert str(tmp_path) not in str(caught.value)


def test_a_moved_or_changed_file_says_why_without_a_path(tmp_path: Path) -> None:
    path = _pdf(tmp_path / "a.pdf")
    files = LibraryFiles(tmp_path, {"a.pdf": _sha256(path)}.get)
    path.write_bytes(path.read_bytes() + b"\n% edited\n")
    with pytest.raises(PaperFileChangedError, match="changed since the stores were built") as e:
        files.path("a.pdf")
    assert str(tmp_path) not in str(e.value)
    path.unlink()
    with pytest.raises(PaperFileMissingError, match="no longer in the papers folder") as gone:
        files.path("a.pdf")
    assert str(tmp_path) not in str(gone.value)
