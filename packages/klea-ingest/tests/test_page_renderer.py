"""Pages are rendered in a child process, so what text extraction reads never depends on
what was rendered before it in the same process.

pdfium keeps font state for the whole process: before the page renderer, OCR rendered in
the converting process, and the tight character boxes of glyphs drawn with substituted
fonts (camelot's bird-island sheet: ArialMT, ArialNarrow-Bold, Tahoma, none embedded) came
out different after another file's page had been rendered ("GROUP 1.3 - 2.0" lost its
decimal point's neighbour). A dead or hung renderer is a ConversionError naming the file
and the page, and the next render starts a fresh one.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline
from klea_utils.stores._ingest.pdf.page_renderer import RENDER_TIMEOUT_S, PageRenderer
from klea_utils.stores._ingest.pdf.pdf_lines import page_lines
from klea_utils.stores.ingest_exceptions import ConversionError
from realpapers import WILD, needs_tesseract, needs_wild, wild_page

pytestmark = pytest.mark.timeout(300)

_SUBSTITUTED = "camelot__birdisland.pdf"
"""A one-page sheet whose fonts are all substituted (not embedded)."""


def _read(path: Path) -> tuple[list[Any], list[Any]]:
    """Page one's lines with their boxes, and the converted document's items with theirs."""
    pdf = pdfium.PdfDocument(str(path))
    try:
        lines = [
            (line.text, line.x0, line.top, line.x1, line.bottom)
            for line in page_lines(pdf, 0).lines
        ]
    finally:
        pdf.close()
    document, _ = convert_pdf_offline(path, do_ocr=False)
    items = [
        (item.text, [(p.page_no, p.bbox.l, p.bbox.t, p.bbox.r, p.bbox.b) for p in item.prov])
        for item, _ in document.iterate_items()
        if hasattr(item, "text")
    ]
    return lines, items


@needs_wild
@needs_tesseract
def test_text_read_after_another_file_was_ocred_is_the_same(tmp_path: Path) -> None:
    assert WILD is not None
    before = _read(WILD / _SUBSTITUTED)
    assert "GROUP 1.3 - 2.0" in "\n".join(text for text, *_ in before[0])
    scan = wild_page("pdfplumber__malformed-from-issue-932.pdf", 0, tmp_path)
    _, recovery = convert_pdf_offline(scan, do_ocr=True)
    assert recovery.ocr == [1]  # its page was rendered for tesseract
    assert _read(WILD / _SUBSTITUTED) == before


@needs_wild
def test_a_killed_renderer_is_a_conversion_error_and_the_next_render_works() -> None:
    assert WILD is not None
    path = WILD / _SUBSTITUTED
    renderer = PageRenderer()
    try:
        image = renderer.render(path, 0, 0.25)
        assert image.mode == "L"
        assert min(image.size) > 100
        pid = renderer.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(ConversionError) as caught:
            renderer.render(path, 0, 0.25)
        assert caught.value.path == path
        assert "page 1" in caught.value.reason
        assert "renderer stopped" in caught.value.reason
        assert renderer.pid is None
        again = renderer.render(path, 0, 0.25)
        assert again.tobytes() == image.tobytes()
        assert renderer.pid not in (None, pid)
    finally:
        renderer.close()


@needs_wild
def test_a_hung_renderer_times_out_on_the_page_and_is_replaced() -> None:
    assert WILD is not None
    path = WILD / _SUBSTITUTED
    renderer = PageRenderer()  # the child's start-up is timed too: not under a loaded 1 s
    try:
        renderer.render(path, 0, 0.1)
        pid = renderer.pid
        assert pid is not None
        renderer.timeout_s = 1.0
        os.kill(pid, signal.SIGSTOP)  # the child stops answering
        with pytest.raises(ConversionError, match=r"rendering page 1 took over 1 s"):
            renderer.render(path, 0, 0.1)
        renderer.timeout_s = RENDER_TIMEOUT_S
        assert renderer.render(path, 0, 0.1).size[0] > 0
        assert renderer.pid != pid
    finally:
        renderer.close()


@needs_wild
def test_a_page_the_file_lacks_names_the_page_and_keeps_the_renderer(tmp_path: Path) -> None:
    assert WILD is not None
    renderer = PageRenderer()
    try:
        renderer.render(WILD / _SUBSTITUTED, 0, 0.1)
        pid = renderer.pid
        with pytest.raises(ConversionError) as caught:
            renderer.render(WILD / _SUBSTITUTED, 5, 0.1)
        assert "page 6 could not be rendered" in caught.value.reason
        assert str(WILD) not in caught.value.reason  # the reason names no folder
        broken = tmp_path / "broken.pdf"
        broken.write_bytes(b"%PDF-1.4\nnot a pdf at all")
        with pytest.raises(ConversionError, match="page 1 could not be rendered"):
            renderer.render(broken, 0, 0.1)
        assert renderer.pid == pid  # a bad page or file does not cost the child
    finally:
        renderer.close()


@needs_wild
def test_no_module_of_the_working_directory_runs_in_the_renderer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert WILD is not None
    (tmp_path / "json.py").write_text("raise SystemExit('a papers folder ran code')\n")
    monkeypatch.chdir(tmp_path)  # a build started from inside a papers folder
    renderer = PageRenderer()
    try:
        assert renderer.render(WILD / _SUBSTITUTED, 0, 0.1).size[0] > 0
    finally:
        renderer.close()
