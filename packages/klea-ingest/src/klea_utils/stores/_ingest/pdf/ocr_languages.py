"""Which tesseract languages to read a page with, from what the page shows and what is installed.

tesseract reads a script only with that script's language data (``rus`` for Cyrillic,
``ara`` for Arabic, ``chi_sim`` for Chinese...); with English alone it turns a Russian
scan or a garbage Cyrillic text layer into Latin look-alikes again. The evidence, strongest
first:

1. the document's ``/Lang`` (``ru``, ``fa-IR``, ``zh-TW``): what its author declared;
2. the script of the page's own text layer, when that layer is legible (a page OCRed
   because it is mostly a scan, or short, still names its script);
3. tesseract's orientation and script detection (OSD, ``--psm 0``) on the rendered page,
   run once per document when nothing above names a script other than Latin (garbage
   text layers: Cyrillic glyphs mapped to Latin letters, Thai in private-use code points).

Each script maps to its languages (:data:`SCRIPT_LANGUAGES`); those installed are used,
with ``eng`` added for the Latin names and numbers most pages carry. A language that is
missing is named once in the log with its Debian package (``tesseract-ocr-rus``); the page
is then read with what is installed. To add a language, install its package (``apt-get
install tesseract-ocr-fas``) or put its ``.traineddata`` in tesseract's ``tessdata``
folder: ``tesseract --list-langs`` shows what tesseract sees, and it is read afresh by
each process.
"""

from __future__ import annotations

import ctypes
import logging
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.pdf.ocr_osd import detect
from klea_utils.stores._ingest.pdf.text_scripts import dominant_scripts

__all__ = [
    "DEFAULT_LANGUAGE",
    "LANG_TAGS",
    "OSD_SCRIPTS",
    "SCRIPT_LANGUAGES",
    "DocumentLanguages",
    "LanguageChoice",
    "choose_languages",
    "document_language",
    "installed_languages",
    "osd_script",
    "tesseract_package",
]

DEFAULT_LANGUAGE = "eng"
"""What tesseract reads with when nothing names another language (and what it has)."""

SCRIPT_LANGUAGES: dict[str, tuple[str, ...]] = {
    "LATIN": ("eng",),
    "CYRILLIC": ("rus",),
    "GREEK": ("ell",),
    "ARABIC": ("ara",),
    "HEBREW": ("heb",),
    "THAI": ("tha",),
    "HAN": ("chi_sim", "chi_tra"),
    "HIRAGANA": ("jpn",),
    "KATAKANA": ("jpn",),
    "HANGUL": ("kor",),
    "DEVANAGARI": ("hin",),
    "BENGALI": ("ben",),
    "TAMIL": ("tam",),
    "ARMENIAN": ("hye",),
    "GEORGIAN": ("kat",),
}
"""Languages whose data reads each script
(:func:`~klea_utils.stores._ingest.pdf.text_scripts.script_of` names); the first installed
ones are used."""

OSD_SCRIPTS: dict[str, str] = {
    "Latin": "LATIN",
    "Cyrillic": "CYRILLIC",
    "Greek": "GREEK",
    "Arabic": "ARABIC",
    "Hebrew": "HEBREW",
    "Thai": "THAI",
    "Han": "HAN",
    "HanS": "HAN",
    "HanT": "HAN",
    "Japanese": "HIRAGANA",
    "Hiragana": "HIRAGANA",
    "Katakana": "KATAKANA",
    "Hangul": "HANGUL",
    "Korean": "HANGUL",
    "Devanagari": "DEVANAGARI",
    "Bengali": "BENGALI",
    "Tamil": "TAMIL",
    "Armenian": "ARMENIAN",
    "Georgian": "GEORGIAN",
}
"""tesseract OSD's script names, as :func:`script_of` names them."""

LANG_TAGS: dict[str, str] = {
    "en": "eng", "de": "deu", "fr": "fra", "es": "spa", "it": "ita", "pt": "por",
    "nl": "nld", "pl": "pol", "cs": "ces", "sv": "swe", "tr": "tur", "ru": "rus",
    "uk": "ukr", "bg": "bul", "sr": "srp", "el": "ell", "ar": "ara", "fa": "fas",
    "ur": "urd", "he": "heb", "iw": "heb", "th": "tha", "zh": "chi_sim", "zh-cn": "chi_sim",
    "zh-hans": "chi_sim", "zh-tw": "chi_tra", "zh-hk": "chi_tra", "zh-hant": "chi_tra",
    "ja": "jpn", "ko": "kor", "hi": "hin", "bn": "ben", "ta": "tam", "hy": "hye",
    "ka": "kat",
}  # fmt: skip
"""BCP 47 language tags (a PDF's ``/Lang``) and the tesseract language of each."""

_LANGUAGE_SCRIPT: dict[str, str] = {
    **{lang: script for script, langs in SCRIPT_LANGUAGES.items() for lang in langs},
    "jpn": "HIRAGANA", "fas": "ARABIC", "urd": "ARABIC", "ukr": "CYRILLIC",
    "bul": "CYRILLIC", "srp": "CYRILLIC",
}  # fmt: skip
"""The script of each language that is not written in Latin letters."""

_OTHER_SCRIPTS = frozenset(lang for lang, script in _LANGUAGE_SCRIPT.items() if script != "LATIN")
"""Languages written in a script other than Latin."""

_MAX_LANGUAGES = 3
"""tesseract slows with every language it holds: a page gets at most this many."""

_MIN_OSD_CONFIDENCE = 0.5
"""Below this OSD script confidence the guess is noise (a blank page, a page number). A
few lines of text score about 1; English stays among the languages whatever OSD says."""

_log = logging.getLogger(__name__)


def tesseract_package(language: str) -> str:
    """The Debian package holding tesseract's data for ``language`` (``chi_sim`` ->
    ``tesseract-ocr-chi-sim``)."""
    return f"tesseract-ocr-{language.replace('_', '-')}"


@lru_cache(maxsize=1)
def installed_languages() -> frozenset[str]:
    """Languages ``tesseract --list-langs`` names (empty without tesseract)."""
    if shutil.which("tesseract") is None:
        return frozenset()
    try:
        done = subprocess.run(
            ["tesseract", "--list-langs"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    lines = (done.stdout + done.stderr).splitlines()
    return frozenset(ln.strip() for ln in lines if ln.strip() and " " not in ln.strip())


def document_language(pdf: Any) -> str | None:
    """The ``/Lang`` of an open ``pypdfium2.PdfDocument``'s catalog, or ``None``."""
    import pypdfium2.raw as raw

    getter = getattr(raw, "FPDFCatalog_GetLanguage", None)
    if getter is None:
        return None
    try:
        size = getter(pdf.raw, None, 0)
        if size <= 2:
            return None
        buffer = (ctypes.c_ushort * (size // 2))()
        getter(pdf.raw, buffer, size)
    except (ctypes.ArgumentError, OSError, TypeError):
        return None
    tag = bytes(buffer)[: size - 2].decode("utf-16-le", "ignore").strip()
    return tag or None


def osd_script(image_path: Path) -> str | None:
    """The script tesseract's OSD sees on the page image (``CYRILLIC``...), or ``None``."""
    if "osd" not in installed_languages():
        return None
    report = detect(image_path, dpi=300)
    if report is None or report.script is None or report.script_confidence is None:
        return None  # too little text on the page to tell
    if report.script_confidence < _MIN_OSD_CONFIDENCE:
        return None
    return OSD_SCRIPTS.get(report.script)


@dataclass(frozen=True)
class LanguageChoice:
    """The ``-l`` argument for tesseract and what would have read the page better."""

    languages: str
    """``+``-joined tesseract languages, e.g. ``rus+eng``."""
    missing: tuple[str, ...] = ()
    """Languages the page's script needs that are not installed."""
    scripts: tuple[str, ...] = field(default=())
    """The scripts the choice was made for."""


def _from_tag(tag: str | None) -> str | None:
    if not tag:
        return None
    tag = tag.strip().lower().replace("_", "-")
    return LANG_TAGS.get(tag) or LANG_TAGS.get(tag.split("-", 1)[0])


def choose_languages(
    *,
    lang_tag: str | None = None,
    layer_text: str = "",
    osd: str | None = None,
    installed: frozenset[str] | None = None,
) -> LanguageChoice:
    """Choose tesseract's languages for one page.

    Args:
        lang_tag: The document's ``/Lang`` (a BCP 47 tag), if any.
        layer_text: The page's legible text layer (empty when it is garbage or absent).
        osd: The script tesseract's OSD saw on the page (an :data:`OSD_SCRIPTS` value).
        installed: Installed languages (default: :func:`installed_languages`).
    """
    have = installed_languages() if installed is None else installed
    wanted: list[str] = []
    scripts: list[str] = []
    declared = _from_tag(lang_tag)
    if declared:
        wanted.append(declared)
    for script in ([osd] if osd else []) + dominant_scripts(layer_text):
        if script in scripts:
            continue
        scripts.append(script)
        langs = SCRIPT_LANGUAGES.get(script, ())
        if declared and _LANGUAGE_SCRIPT.get(declared, "LATIN") == _LANGUAGE_SCRIPT.get(
            langs[0] if langs else "", "LATIN"
        ):
            continue  # /Lang already chose among this script's languages (fas, not ara)
        present = [lang for lang in langs if lang in have]
        wanted.extend((present[:2] if script == "HAN" else present[:1]) or langs[:1])
    if DEFAULT_LANGUAGE not in wanted:
        wanted.append(DEFAULT_LANGUAGE)  # Latin names, units and numbers
    ordered = list(dict.fromkeys(wanted))
    usable = [lang for lang in ordered if lang in have][:_MAX_LANGUAGES]
    # English data reads a French or German page well enough: only a missing language of
    # another script is worth a word to the user
    missing = tuple(lang for lang in ordered if lang not in have and lang in _OTHER_SCRIPTS)
    return LanguageChoice(
        languages="+".join(usable) or DEFAULT_LANGUAGE, missing=missing, scripts=tuple(scripts)
    )


_warned: set[str] = set()


def warn_missing(choice: LanguageChoice, path: Path, page_no: int) -> None:
    """Name, once per process and language, the package that would read a page better."""
    for language in choice.missing:
        if language in _warned or language == DEFAULT_LANGUAGE:
            continue
        _warned.add(language)
        _log.warning(
            "%s: page %d looks like %s; tesseract has no '%s' data, so OCR reads it as '%s' "
            "(install the `%s` package to read it)",
            path.name,
            page_no,
            "/".join(s.lower() for s in choice.scripts) or language,
            language,
            choice.languages,
            tesseract_package(language),
        )


_OSD_TRIES = 3
"""OSD runs on at most this many pages of a document before the document counts as Latin."""


class DocumentLanguages:
    """Chooses the languages of each page OCR reads in one document.

    OSD runs only where the evidence is missing (no ``/Lang``, no legible text layer) and
    only until it names a script with confidence: a document keeps its script from page
    to page, and each OSD run costs a tesseract start.
    """

    def __init__(self, pdf: Any, path: Path) -> None:
        self.path = path
        self.lang_tag = document_language(pdf)
        self.osd: str | None = None
        self._osd_tries = 0

    def chooser(self, layer_text: str, page_no: int) -> Callable[[Path], str]:
        """A function of the rendered page image that returns tesseract's ``-l`` argument.

        ``layer_text`` is the page's text layer when it is legible, else ``""``.
        """

        def choose(image: Path) -> str:
            have = installed_languages()
            unsure = not self.lang_tag and not layer_text.strip() and self.osd is None
            choice_to_make = bool(have - {DEFAULT_LANGUAGE, "osd"})
            if unsure and choice_to_make and self._osd_tries < _OSD_TRIES:
                self._osd_tries += 1
                self.osd = osd_script(image)
            choice = choose_languages(
                lang_tag=self.lang_tag, layer_text=layer_text, osd=self.osd, installed=have
            )
            warn_missing(choice, self.path, page_no)
            return choice.languages

        return choose
