"""OCR in the script's language: tesseract's languages chosen from what the page shows.

The choice itself is a pure function (:func:`choose_languages`); the end-to-end tests OCR
a generated Russian scan and a real page whose text layer is Cyrillic read as Latin
look-alikes (``shared/data/realpapers-wild``), with the language data ``scripts/test``
installs (``tesseract-ocr-rus``).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from klea_utils.stores._ingest.pdf.ocr_languages import (
    choose_languages,
    installed_languages,
    tesseract_package,
)
from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline
from klea_utils.stores._ingest.pdf.page_renderer import render_page
from klea_utils.stores._ingest.pdf.text_quality import assess
from realpapers import WILD, needs_wild

pytestmark = pytest.mark.timeout(600)

_ALL = frozenset({"eng", "osd", "rus", "ara", "fas", "tha", "chi_sim", "chi_tra", "jpn", "kor"})
_DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def _needs_language(code: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Fail (never skip) a test whose tesseract language data is missing: ``scripts/test``
    installs it (``ensure_tesseract_languages``), so a missing one is a broken setup."""

    def mark(test: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(test)
        def run(*args: object, **kwargs: object) -> None:
            assert code in installed_languages(), f"apt-get install {tesseract_package(code)}"
            test(*args, **kwargs)

        return run

    return mark


needs_arabic = _needs_language("ara")
needs_russian = _needs_language("rus")


@pytest.mark.parametrize(
    ("tag", "layer", "osd", "expected"),
    [
        (None, "", None, "eng"),
        (None, "", "CYRILLIC", "rus+eng"),
        (None, "Привет мир, как дела", None, "rus+eng"),
        ("fa-IR", "", "ARABIC", "fas+eng"),  # /Lang picks Persian among the Arabic script's
        ("en-US", "تحسين الإنتاجية وحل المشكلات", None, "eng+ara"),  # a wrong /Lang
        (None, "中文的句子没有空格", None, "chi_sim+chi_tra+eng"),
        (None, "これは追加の長い段落です", None, "jpn+chi_sim+chi_tra"),
        ("ko", "", None, "kor+eng"),
    ],
)
def test_languages_follow_the_page(
    tag: str | None, layer: str, osd: str | None, expected: str
) -> None:
    choice = choose_languages(lang_tag=tag, layer_text=layer, osd=osd, installed=_ALL)
    assert choice.languages == expected
    assert choice.missing == ()


def test_a_missing_language_is_named_with_its_package() -> None:
    choice = choose_languages(osd="THAI", installed=frozenset({"eng", "osd"}))
    assert choice.languages == "eng"
    assert choice.missing == ("tha",)
    assert tesseract_package("chi_sim") == "tesseract-ocr-chi-sim"
    # a Latin language that is missing is not worth a warning: English reads it
    assert choose_languages(lang_tag="de", installed=frozenset({"eng"})).missing == ()


def _russian_scan(path: Path) -> Path:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(TTFont("DejaVu", str(_DEJAVU)))
    text_pdf = io.BytesIO()
    c = canvas.Canvas(text_pdf, pagesize=A4)
    c.setFont("DejaVu", 24)
    for row, line in enumerate(
        ["Налоговая декларация", "по налогу на прибыль", "организаций за первый квартал"]
    ):
        c.drawString(60, A4[1] - 100 - 40 * row, line)
    c.save()
    text_path = path.with_name(f".{path.name}.text.pdf")
    text_path.write_bytes(text_pdf.getvalue())
    try:  # never rendered in the test process (it would change later char boxes)
        image = render_page(text_path, 0, 3)
    finally:
        text_path.unlink()
    png = io.BytesIO()
    image.save(png, format="PNG")
    png.seek(0)
    c = canvas.Canvas(str(path), pagesize=A4)
    c.drawImage(ImageReader(png), 0, 0, width=A4[0], height=A4[1])
    c.save()
    return path


def _text(path: Path) -> str:
    doc, _ = convert_pdf_offline(path, do_ocr=True)
    return " ".join(item.text for item, _ in doc.iterate_items() if hasattr(item, "text"))


@pytest.mark.slow
@needs_russian
def test_a_russian_scan_is_read_in_russian(tmp_path: Path) -> None:
    text = _text(_russian_scan(tmp_path / "scan.pdf"))
    assert "Налоговая" in text
    assert "декларация" in text


@pytest.mark.slow
@needs_russian
@needs_wild
def test_a_cyrillic_layer_of_latin_look_alikes_is_read_again_in_russian(tmp_path: Path) -> None:
    # pdf.js issue12963 p. 5: an OCR layer that read Russian as Latin ("Hanorosoro")
    assert WILD is not None
    source = pdfium.PdfDocument(WILD / "pdfjs__issue12963.pdf")
    page = pdfium.PdfDocument.new()
    page.import_pages(source, [4])
    path = tmp_path / "p5.pdf"
    page.save(path)
    page.close()
    layer = str(source[4].get_textpage().get_text_range())
    source.close()
    assert not assess(layer).readable
    text = _text(path)
    assert "налога" in text.lower()
    assert "Hanoro" not in text


@pytest.mark.slow
@needs_arabic
@needs_wild
def test_a_garbled_arabic_layer_is_read_again_in_arabic() -> None:
    # pdf.js ThuluthFeatures.pdf: an Arabic page whose fonts have no ToUnicode map, so its
    # text layer is a soup of Greek, Cyrillic, Sinhala and Kannada code points
    assert WILD is not None
    source = pdfium.PdfDocument(WILD / "pdfjs__ThuluthFeatures.pdf")
    layer = str(source[0].get_textpage().get_text_range())
    source.close()
    assert not assess(layer).readable
    assert sum("\u0600" <= c <= "\u06ff" for c in layer) < 30
    text = _text(WILD / "pdfjs__ThuluthFeatures.pdf")
    assert sum("\u0600" <= c <= "\u06ff" for c in text) > 500
    assert "الرئيسية" in text
    assert "ϸЇ" not in text
