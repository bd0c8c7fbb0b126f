"""One tesseract OSD run per page image answers both orientation and script (issue 24).

The report of ``tesseract IMAGE stdout --psm 0`` is parsed once and kept by the image's
content, so the orientation step reuses what the script step learnt about the same page.
"""

from __future__ import annotations

from pathlib import Path

from klea_utils.stores._ingest.pdf.ocr_orientation import osd_turn, read_upright
from klea_utils.stores._ingest.pdf.ocr_osd import OsdReport, detect, known_report, parse_report
from PIL import Image, ImageDraw, ImageFont
from realpapers import needs_tesseract

LINES = [
    "Scanned pages arrive from the copier as one picture",
    "of the whole sheet, and some arrive upside down",
    "because the sheet was fed into the machine the",
    "wrong way round; the reader must turn it first.",
] * 3


def _image(path: Path, turn: int) -> Path:
    font = ImageFont.load_default(size=40)
    image = Image.new("L", (1700, 1100), 255)
    draw = ImageDraw.Draw(image)
    for n, line in enumerate(LINES):
        draw.text((80, 60 + 80 * n), line, font=font, fill=0)
    image.rotate(turn, expand=True).save(path)
    return path


def test_the_report_names_turn_and_script_with_their_confidences() -> None:
    stdout = (
        "Page number: 0\nOrientation in degrees: 180\nRotate: 180\n"
        "Orientation confidence: 12.41\nScript: Cyrillic\nScript confidence: 3.05\n"
    )
    assert parse_report(stdout) == OsdReport(180, 12.41, "Cyrillic", 3.05)
    assert parse_report("Too few characters. Skipping this page\n") == OsdReport(
        None, None, None, None
    )


@needs_tesseract
def test_one_run_answers_both_questions_and_is_kept_by_content(tmp_path: Path) -> None:
    upside_down = _image(tmp_path / "page.png", 180)
    assert known_report(upside_down) is None
    report = detect(upside_down)
    assert report is not None
    assert report.turn == 180
    assert report.script == "Latin"
    copy = tmp_path / "copy.png"
    copy.write_bytes(upside_down.read_bytes())
    assert known_report(copy) == report  # the same picture under another name
    assert osd_turn(copy) == 180
    assert known_report(_image(tmp_path / "upright.png", 0)) is None


def test_an_unreadable_image_has_no_report(tmp_path: Path) -> None:
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"not an image")
    assert detect(junk) is None
    assert known_report(tmp_path / "missing.png") is None


def _tesseract_tsv(path: Path) -> str:
    import os
    import subprocess

    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    cmd = ["tesseract", str(path), "stdout", "-l", "eng", "tsv"]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout


@needs_tesseract
def test_the_page_goes_to_tesseract_uncompressed_and_reads_as_its_png(tmp_path: Path) -> None:
    """Issue 40: the page images are PGM (no zlib work on either side), the same pixels as
    the PNG they were, so tesseract's reading is the same, turn included."""
    image = Image.open(_image(tmp_path / "sheet.png", 180))
    image.load()
    seen: list[Path] = []

    def read(path: Path) -> str:
        seen.append(path)
        return _tesseract_tsv(path)

    tsv, upright, turn = read_upright(image, tmp_path, read)
    assert turn == 180
    assert [p.suffix for p in seen] == [".pgm", ".pgm"]
    assert Image.open(seen[0]).tobytes() == image.tobytes()
    png = tmp_path / "upright.png"
    upright.save(png)
    assert _tesseract_tsv(png) == tsv
    assert "wrong" in tsv
