"""Bibliographic metadata extraction: the cascade that pre-fills a file's ``DEFAULT`` entry.

Sources are consulted from the most to the least authoritative, and each one only fills the
fields still empty:

1. DOI services (Crossref, OpenAlex, Semantic Scholar), cached in
   ``doi-cache.json`` inside the cache directory. Optional: skipped with one warning offline.
2. The PDF Info dictionary (pypdfium2): ``Keywords``, ``Subject``, and ``Title`` and
   ``Author`` only when page one prints them (:mod:`.info_trust`: a producer's file name,
   placeholder or account never fills a field).
3. Docling's document: the first title item, the names below its box on page one, and the
   document's hyperlinks.
4. Regular expressions over the top of page one: the title (not a line of table column
   heads or a running head, which page one's layout tells apart: :mod:`.title_layout`), an
   author line, and a byline such as ``Ana Ortiz, Liam Chen. Journal of Galactic Studies,
   2021.`` (authors, journal, year); the year page one states, checked against the arXiv
   id, else the year the title names (:mod:`.page_years`). Where still no title: the
   topmost heading in the top 30% of page one, on a scanned page only clean words
   (:mod:`.top_heading`).
5. A regular expression over the first 3,000 characters (DOI, keywords, authors, URLs).

A title that is no title (a file id, a placeholder, a disclaimer) and a first author that
is no person (an office, a code) are refused from every source but the DOI services: a
field is left empty rather than filled with noise.

A title equal to the file name stem (a common PDF Info default, e.g. for scanned PDFs) is
replaced by the first heading that is not running-header boilerplate; a document with no
such heading (OCR output has none) takes its first substantial text line instead (source
``first_line``).

The result holds ``title``, ``authors``, ``keywords``, ``year``, ``journal``, ``doi``, the
``url``/``url_1``/... links and ``url_doi``, plus two internal keys that never reach a store:
``_metadata_complete`` (every core field was found) and ``_sources`` (field -> source name).
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.biblio import biblio_regex as rx
from klea_utils.stores._ingest.biblio.author_lines import is_affiliation_word
from klea_utils.stores._ingest.biblio.doi_cache import open_doi_cache
from klea_utils.stores._ingest.biblio.doi_services import lookups_enabled, shared_resolver
from klea_utils.stores._ingest.biblio.info_trust import (
    info_people,
    is_noise_author,
    is_noise_title,
    title_agrees,
)
from klea_utils.stores._ingest.biblio.name_parsing import split_people
from klea_utils.stores._ingest.biblio.page_years import page_year, title_year
from klea_utils.stores._ingest.biblio.title_layout import refused_title_line
from klea_utils.stores._ingest.biblio.title_text import (
    close_letter_spacing,
    without_document_number,
)
from klea_utils.stores._ingest.biblio.top_heading import has_text_layer, top_heading
from klea_utils.stores._ingest.biblio.under_title import authors_under_title

__all__ = ["BIBLIO_FIELDS", "COMPLETE_FIELDS", "MAX_URLS", "extract_metadata"]

BIBLIO_FIELDS = ("title", "authors", "keywords", "year", "journal", "doi")
"""The bibliographic fields the cascade fills, in template order."""

COMPLETE_FIELDS = ("title", "authors", "year", "journal", "doi")
"""Fields that must all be found for ``_metadata_complete`` to be true."""

MAX_URLS = 10
"""Most ``url*`` links kept from one document (reference lists can hold hundreds)."""

_HEAD_READ = 20_000
_log = logging.getLogger(__name__)


class _Fields:
    """Accumulates fields; the first source to supply a field wins."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.sources: dict[str, str] = {}
        self.urls: list[str] = []

    def offer(self, field: str, value: Any, source: str) -> None:
        if field in self.values or value in (None, "", [], ()):
            return
        if field == "title" and isinstance(value, str):
            value = close_letter_spacing(value)  # a form's head spaced out: "A N E X O"
            value = without_document_number(value)  # "MANUAL TRANSMITTAL 2.3.59"
        if field == "authors" and not source.startswith("doi") and is_noise_author(value[0]):
            return  # an office, a code or column heads read as the first name: leave it empty
        self.values[field] = value
        self.sources[field] = source

    def offer_urls(self, urls: list[str], source: str) -> None:
        for url in urls:
            if re.match(r"https?://(dx\.)?doi\.org/", url, re.IGNORECASE):
                self.offer("doi", rx.strip_doi(url), source)
                continue
            if url not in self.urls and len(self.urls) < MAX_URLS:
                if not self.urls:
                    self.sources.setdefault("url", source)
                self.urls.append(url)


_PLAIN_DIGITS = str.maketrans(
    "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b", "0123456789-"
)
"""Raised digits (affiliation marks the PDF line reader writes raised) read as the text
layer gives them, so the byline rules that drop marks see them as before."""


def _text_items(document: Any) -> Iterator[tuple[Any, str, Any]]:
    """``(item, text, first provenance or None)`` for the text items of a DoclingDocument."""
    iterate = getattr(document, "iterate_items", None)
    if iterate is None:
        return
    for entry in iterate():
        item = entry[0] if isinstance(entry, tuple) else entry
        text = getattr(item, "text", None)
        if isinstance(text, str):
            prov = getattr(item, "prov", None) or []
            yield item, text.translate(_PLAIN_DIGITS), prov[0] if prov else None


def _doc_items(document: Any) -> list[tuple[str, str, int | None, str | None]]:
    """(label, text, page number, hyperlink) for the text items of a DoclingDocument."""
    items: list[tuple[str, str, int | None, str | None]] = []
    for item, text, prov in _text_items(document):
        label = str(getattr(getattr(item, "label", None), "value", getattr(item, "label", "")))
        page = getattr(prov, "page_no", None)
        link = getattr(item, "hyperlink", None)
        items.append((label, text, page, str(link) if link else None))
    return items


def _page_one_boxes(document: Any) -> list[tuple[str, float, float, float]]:
    """(text, top, bottom, left) of the page-one text items, top-left origin."""
    boxes: list[tuple[str, float, float, float]] = []
    for item, text, first in _text_items(document):
        if getattr(first, "page_no", None) != 1:
            continue
        # the model-free path gives one provenance per line: the item's box is their union
        spans = []
        for prov in getattr(item, "prov", None) or []:
            box = getattr(prov, "bbox", None)
            if getattr(prov, "page_no", None) != 1 or box is None:
                continue
            flip = str(getattr(box, "coord_origin", "")).upper().endswith("BOTTOMLEFT")
            top, bottom = (-box.t, -box.b) if flip else (box.t, box.b)
            spans.append((top, bottom, box.l))
        if spans:
            top = min(s[0] for s in spans)
            bottom = max(s[1] for s in spans)
            boxes.append((text, top, bottom, min(s[2] for s in spans)))
    return boxes


def _grid_row_names(document: Any, first: str, names: list[str]) -> list[str]:
    """``names`` (found in the item ``first``) with the names of the items on its row."""
    boxes = _page_one_boxes(document) if document is not None else []
    anchor = next((b for b in boxes if b[0] == first), None)
    if anchor is None:
        return names
    height = max(anchor[2] - anchor[1], 1.0)
    row = sorted(
        (b for b in boxes if abs(b[1] - anchor[1]) < 0.5 * height and len(b[0]) <= 400),
        key=lambda b: b[3],
    )
    found: list[str] = []
    for text, *_ in row:
        for name in names if text == first else rx.author_names(text):
            if name not in found:
                found.append(name)
    return found if names[0] in found else names


def _plain_text(file_path: Path) -> str:
    try:
        with file_path.open(encoding="utf-8", errors="replace") as handle:
            text = handle.read(_HEAD_READ)
    except OSError:
        return ""
    if file_path.suffix.lower() in {".html", ".htm", ".xhtml", ".xml"}:
        text = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", text)
        text = re.sub(r"(?i)<(br|/p|/h\d|/div|/li|/title)\b[^>]*>", "\n", text)
        text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return text


def _pdf_page_one(file_path: Path) -> str:
    try:
        import pypdfium2 as pdfium

        pdf = pdfium.PdfDocument(file_path)
        try:
            if len(pdf) == 0:
                return ""
            page = pdf[0]
            textpage = page.get_textpage()
            text = str(textpage.get_text_range())
            textpage.close()
            page.close()
            return text
        finally:
            pdf.close()
    except Exception as exc:  # a broken PDF only loses this source
        _log.debug("%s: no page-one text (%s)", file_path, exc)
        return ""


def _pdf_info(file_path: Path) -> dict[str, str]:
    try:
        import pypdfium2 as pdfium

        pdf = pdfium.PdfDocument(file_path)
        try:
            return {k: v.strip() for k, v in pdf.get_metadata_dict(skip_empty=True).items()}
        finally:
            pdf.close()
    except Exception as exc:  # unreadable Info dictionary: skip
        _log.debug("%s: no PDF Info dictionary (%s)", file_path, exc)
        return {}


def _split_people(value: str) -> list[str]:
    return split_people(rx.clean_name_text(value))


def _below_title(items: list[tuple[str, str, int | None, str | None]], document: Any) -> list[str]:
    """Page-one texts after the title: in layout order below its box where the items have
    boxes (the model-free path puts the title item first whatever is printed above it),
    else in document order; section headings are left out."""
    title = next((t for label, t, _, _ in items if label == "title"), None)
    boxes = _page_one_boxes(document) if document is not None and title is not None else []
    anchor = next((b for b in boxes if b[0] == title), None)
    if anchor is not None:
        below = sorted((b for b in boxes if b[1] >= anchor[2] - 1.0), key=lambda b: (b[1], b[3]))
        return [b[0] for b in below if b[0] != title]  # a bold name line reads as a heading
    after = False
    texts: list[str] = []
    for label, text, page, _ in items:
        if label == "title":
            after = True
        elif after and page in (None, 1) and label != "section_header":
            texts.append(text)
    return texts


_IEEE_GRADE_RE = re.compile(r"\b(?:(?:senior|student|life)\s+)?(?:member|fellow),?\s+ieee\b", re.I)
_MARKS_RE = re.compile(r"[\d*+#$\u2217\u2020\u2021\u00a7]+")
_NAMES_HEAD = 400  # an author block runs on into affiliations and e-mail addresses


def _mostly_names(text: str, names: list[str]) -> bool:
    """Whether the names are most of the line's items (not two words of a sentence or an
    address: "Geologic Drilling & Aggregate Sampling Program, Upper San Joaquin ...")."""
    text = _IEEE_GRADE_RE.sub(",", text)
    items = [i for i in rx.split_list(_MARKS_RE.sub(",", text)) if i]
    return len(names) > 0.5 * len(items)


_PREPARED_BY_RE = re.compile(
    r"^\s*(?:(?:prepared|written|compiled|authored)\s+)?by\s*:?\s+(?=\S)", re.IGNORECASE
)
"""A report's label before its authors' names (``Prepared by``), left out of the names."""


def _starts_institution(text: str, name: str) -> bool:
    """Whether ``name`` is the start of an institution's name in ``text``: right after it,
    with no mark between, come at most three more capitalised words ending in an
    affiliation word (``Oak Ridge`` of ``Oak Ridge National Laboratory``, the laboratory that
    prepared a report; not ``Harry Buhrman* CWI ... University``, a grid of names)."""
    at = text.find(name)
    if at < 0:
        return False
    words = text[at + len(name) :].split()[:4]
    for word in words:
        if not (word[:1].isupper() and word.isalpha()):
            return False
        if is_affiliation_word(word):
            return True
    return False


def _authors_below_title(
    items: list[tuple[str, str, int | None, str | None]], document: Any = None
) -> list[str]:
    """Names in the first two texts below the title on page one.

    The names of an author grid whose columns the text layer (or OCR) put in separate
    items, one of them after the abstract, are gathered from every page-one item on the
    same row as the first names, left to right.
    """
    for seen, text in enumerate(_below_title(items, document)[:2], 1):
        head = re.split(r"[{@]|https?://", text[:_NAMES_HEAD])[0]  # before e-mail addresses
        head = _PREPARED_BY_RE.sub("", head)  # "Prepared by R. L. Reid, V. S. White"
        names = rx.author_names(head)
        if names and _mostly_names(head, names) and not _starts_institution(head, names[0]):
            return _grid_row_names(document, text, names)
        organisation = rx.organisation_name(text) if seen == 1 else None
        if organisation is not None:
            return [organisation]  # a report by a company or collaboration ("DeepSeek-AI")
    return []


_BYLINE_TAIL_RE = re.compile(r"\s+(?:By|BY)\s+((?:[A-Z]\.\s*)+[A-Z].*)$")
"""The start of a byline the title block ran into (the same type size: ``By R. K. ANDJUS``)."""

_PLACEHOLDER_RE = re.compile(
    r"^[(\[<]?"  # optionally bracketed, as reportlab's "(anonymous)"
    r"(untitled|none|null|unknown|anonymous|microsoft word\b.*|.*\.(docx?|pdf|tex|dvi))"
    r"[)\]>]?$",
    re.IGNORECASE,
)


def _real(value: str) -> str:
    """``value`` whitespace-collapsed, or ``""`` for producer placeholders ("untitled")."""
    value = " ".join(value.split())
    return "" if _PLACEHOLDER_RE.match(value) else value


def _from_pdf_info(info: dict[str, str], fields: _Fields, page_text: str) -> None:
    """The Info fields page one agrees with (see :mod:`.info_trust`); never a producer's."""
    source = "pdf_info"
    title = _real(info.get("Title", ""))
    if title and not is_noise_title(title) and title_agrees(title, page_text):
        fields.offer("title", title, source)
    fields.offer(
        "authors", info_people(_split_people(_real(info.get("Author", ""))), page_text), source
    )
    fields.offer("keywords", rx.split_list(info.get("Keywords", "")), source)
    for key in ("Subject", "Keywords", "Title"):
        doi = rx.find_doi(info.get(key, ""))
        if doi:
            fields.offer("doi", doi, source)
            break


def _lookup_doi(doi: str, cache_dir: Path | None, fields: _Fields) -> None:
    cache = open_doi_cache(cache_dir) if cache_dir is not None else None
    record = cache.get(doi) if cache is not None else None
    if record is None:
        if not lookups_enabled():
            return
        resolver = shared_resolver()
        if resolver.offline:
            return
        record = resolver.lookup(doi)
        if record is None:
            return
        if cache is not None:
            cache.put(doi, record)
    service = str(record.get("_service", "doi"))
    for field in ("title", "authors", "keywords", "year", "journal"):
        fields.offer(field, record.get(field), f"doi:{service}")
    if record:
        fields.offer("doi", doi, f"doi:{service}")


def _first_heading(headings: list[str], stem: str) -> str | None:
    for heading in headings:
        clean = " ".join(heading.lstrip("#").split())
        if clean and not rx.never_title(clean) and clean.casefold() != stem.casefold():
            return clean
    return None


def _is_stem(title: str, stem: str) -> bool:
    def norm(value: str) -> str:
        return re.sub(r"[\s_\-.]+", " ", value).strip().casefold()

    return norm(title) == norm(stem)


def extract_metadata(
    file_path: Path,
    document: Any = None,
    *,
    cache_dir: Path | None = None,
    head_lines: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """Extract bibliographic metadata for one source file.

    Args:
        file_path: The source file.
        document: Docling's converted document for the file, or ``None`` (then plain-text
            files are read directly and PDFs through pypdfium2).
        cache_dir: Directory holding ``doi-cache.json``; ``None`` keeps DOI answers in
            memory only.
        head_lines: The lines of the PDF's first pages as the conversion read them
            (``Recovery.head_lines`` of the model-free path), so that the title's layout
            check does not open the file again; ``None`` reads them from the file.

    Returns:
        The found fields (``title``, ``authors``, ``keywords``, ``year``, ``journal``,
        ``doi``, ``url``/``url_N``, ``url_doi``) plus ``_metadata_complete`` and
        ``_sources``. Fields no source supplied are absent.
    """
    file_path = Path(file_path)
    suffix = file_path.suffix.lower()
    items = _doc_items(document) if document is not None else []
    if items:
        full_text = "\n".join(text for _, text, _, _ in items)
        page_one = "\n".join(t for _, t, page, _ in items if page in (None, 1))
        headings = [t for label, t, _, _ in items if label in {"title", "section_header"}]
    else:
        full_text = _pdf_page_one(file_path) if suffix == ".pdf" else _plain_text(file_path)
        page_one = full_text
        headings = [m.group(1) for m in re.finditer(r"(?m)^#{1,6}\s+(.+)$", full_text)]
    head = full_text[: rx.HEAD_CHARS]
    info = _pdf_info(file_path) if suffix == ".pdf" else {}
    # the text layer of page one as printed (running heads and arXiv stamps included)
    layer = (_pdf_page_one(file_path) if items else full_text) if suffix == ".pdf" else ""
    printed = layer if layer.strip() else page_one

    doi = rx.find_doi(" ".join(info.get(k, "") for k in ("Subject", "Keywords")))
    doi = doi or next((rx.strip_doi(u) for _, _, _, u in items if u and rx.find_doi(u)), None)
    doi = doi or rx.find_doi(head)

    fields = _Fields()
    if doi:
        _lookup_doi(doi, cache_dir, fields)
    _from_pdf_info(info, fields, printed)
    title_item = " ".join((next((t for lb, t, _, _ in items if lb == "title"), "")).split())
    tail = _BYLINE_TAIL_RE.search(title_item)  # "... DIATHERMY By R. K. ANDJUS* AND ..."
    if tail is not None:
        title_item = title_item[: tail.start()]
        fields.offer("authors", rx.author_names(tail.group(1)), "docling")
    fields.offer("title", None if is_noise_title(title_item) else title_item, "docling")
    if document is None and suffix in {".md", ".markdown"}:
        h1 = re.search(r"(?m)^#\s+(.+)$", full_text)  # the H1 wins over labelled lines
        fields.offer("title", " ".join(h1.group(1).split()) if h1 else None, "heading")
    fields.offer("authors", _authors_below_title(items, document), "docling")
    fields.offer_urls([u for _, _, _, u in items if u and u.startswith("http")], "docling")
    byline = rx.find_byline(page_one)
    if byline is not None:
        fields.offer("authors", byline.authors, "page_one")
        fields.offer("journal", byline.journal, "page_one")
        fields.offer("year", byline.year, "page_one")
    top_title, top_authors = rx.find_title_and_authors(page_one)
    fresh = top_title and "title" not in fields.values and suffix == ".pdf"
    if fresh and refused_title_line(file_path, str(top_title), head_lines) is not None:
        top_title, top_authors = None, []  # table heads or a running head, and what follows
    fields.offer("title", None if is_noise_title(top_title or "") else top_title, "page_one")
    fields.offer("authors", top_authors, "page_one")
    if "title" not in fields.values and suffix == ".pdf":
        heading = top_heading(document, scanned=not has_text_layer(layer))
        if heading and refused_title_line(file_path, heading, head_lines) is None:
            fields.offer("title", None if is_noise_title(heading) else heading, "top_heading")
    title = fields.values.get("title")
    if isinstance(title, str) and suffix == ".pdf":
        fields.offer("authors", authors_under_title(printed, title), "page_lines")
    fields.offer("doi", rx.find_doi(head), "text")
    fields.offer("keywords", rx.find_keywords(head), "text")
    fields.offer("authors", rx.find_authors(head), "text")
    fields.offer("year", page_year(printed, file_path.name), "page_one")
    title = fields.values.get("title")
    fields.offer("year", title_year(title) if isinstance(title, str) else None, "title")
    fields.offer_urls(rx.find_urls(head), "text")

    _replace_stem_title(fields, file_path.stem, headings, page_one)
    return _assemble(fields)


def _replace_stem_title(fields: _Fields, stem: str, headings: list[str], page_one: str) -> None:
    """A title equal to the file stem gives way to the first heading, else the first line."""
    title = fields.values.get("title")
    if not isinstance(title, str) or not _is_stem(title, stem):
        return
    heading = _first_heading(headings, stem)
    line = None if heading else rx.first_text_line(page_one)
    if line is not None and _is_stem(line, stem):
        line = None
    if heading or line:
        fields.values["title"] = heading or line
        fields.sources["title"] = "heading" if heading else "first_line"


def _assemble(fields: _Fields) -> dict[str, Any]:
    result: dict[str, Any] = {f: fields.values[f] for f in BIBLIO_FIELDS if f in fields.values}
    for index, url in enumerate(fields.urls):
        result["url" if index == 0 else f"url_{index}"] = url
    if "doi" in result:
        result["url_doi"] = f"https://doi.org/{result['doi']}"
        fields.sources.setdefault("url_doi", fields.sources.get("doi", ""))
    result["_metadata_complete"] = all(f in result for f in COMPLETE_FIELDS)
    result["_sources"] = {k: v for k, v in fields.sources.items() if k in result}
    return result
