"""Whether a title or an author can be believed: noise is refused, the PDF Info must agree.

Producers fill a PDF's Info dictionary with what they have at hand: the file name
(``Microsoft Word - USJBSI Draft EA.doc``, ``p020-dutot.dvi``, ``Yannis_DOE2000``), a
template's placeholder (``PowerPoint Presentation``, ``Document``), the account that made
the file (``Administrator``, ``froscan``, ``Owner``) or the software's vendor. An empty
field is better than any of them: a wrong title or author is shown to the user and links
citations to the wrong paper.

- :func:`is_noise_title`: a value that is no title (a file name or id, a placeholder, a
  sentence of a disclaimer, a running head, a table row, mostly digits, OCR's reading of
  specks: :mod:`.title_text`).
- :func:`title_agrees`: the Info title is printed at the top of page one (nearly every word
  of it, in the top lines), not as a paragraph's first sentence.
- :func:`info_people`: the Info authors that are people named on page one (or one name
  printed alone on a line at the top, as on a title slide).
"""

from __future__ import annotations

import re
import unicodedata

from klea_utils.stores._ingest.biblio.author_lines import is_affiliation_word, looks_like_name
from klea_utils.stores._ingest.biblio.line_kinds import never_title
from klea_utils.stores._ingest.biblio.title_text import reads_as_words

__all__ = ["fold_words", "info_people", "is_noise_author", "is_noise_title", "title_agrees"]

_TOP_LINES = 20
_AGREE_SHARE = 0.85
_MAX_TITLE_WORDS = 30
_FILE_EXTENSIONS = (
    "doc|docx|xls|xlsx|ppt|pptx|pdf|dvi|tex|ps|eps|rtf|txt|indd|qxd|wpd|odt|pages|key|html?"
)
_FILE_NAME_RE = re.compile(
    rf"(?:\.(?:{_FILE_EXTENSIONS})\s*$|^microsoft (?:word|powerpoint|excel)\s*-)", re.IGNORECASE
)
_PLACEHOLDERS = frozenset(
    """powerpoint presentation|presentation|document|package|slide 1|title|untitled document|
    new document|word document|adobe acrobat document|no title|sans titre|
    pdf document|print|printing|scan|scanned document|image""".replace("\n", "").split("|")
)
_ID_RE = re.compile(r"^[\w\-.]+$")
_ORGANISATION_TEXT = """technologies technology systems services service office agency
administration government company corporation incorporated inc ltd llc gmbh team support user owner
administrator admin staff division bureau board council committee ministry region
ag kg sa sarl srl spa plc bv nv
department departamento departement dipartimento ministerio ministere ministero commune comune
municipality municipio county province provincia republic republica republique program programme
society governance science sciences engineering physics mathematics chemistry biology medicine"""
_ORGANISATION_WORDS = frozenset(_ORGANISATION_TEXT.split())
"""Words of an office, a vendor, an account or a public body, never of a person's name
(folded: ``Département`` is ``departement``)."""
_PHRASE_TEXT = """the this that these those our your of for with inside issue report guide
guidelines manual handbook summary overview version draft edition chapter proceedings thesis
dissertation presentation workshop conference assessment statement specification appendix
annex tutorial newsletter bulletin brochure recommendation recommendations standard"""
_PHRASE_WORDS = frozenset(_PHRASE_TEXT.split())
"""Words of a phrase or of a kind of document, never of a name (``INSIDE THIS ISSUE``,
``Technical Report``, ``User Guide`` under a title)."""


_TWO_SENTENCES_RE = re.compile(r"[a-z]{2,}[.!?]\s+[A-Z][a-z]*\s.*[a-z][.!?]$")
"""A line of two sentences or more (``This is a test document. It only contains some
text.``): a paragraph, not a title."""


def fold_words(text: str) -> list[str]:
    """Lower-case words of ``text``, accents and punctuation dropped."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return re.findall(r"[^\W_]+", plain)


def is_noise_title(value: str) -> bool:
    """Whether ``value`` cannot be a document's title (see the module's list)."""
    value = " ".join(value.split())
    words = value.split()
    letters = sum(c.isalpha() for c in value)
    return (
        not value
        or value.casefold().strip(" .") in _PLACEHOLDERS
        or bool(_FILE_NAME_RE.search(value))
        or (len(words) == 1 and bool(_ID_RE.match(value)) and any(c.isdigit() for c in value))
        or "_" in value
        or letters < 4
        or letters < 0.5 * len(value.replace(" ", ""))
        or len(words) > _MAX_TITLE_WORDS
        or (len(words) > 15 and value.endswith("."))
        or never_title(value)
        or not reads_as_words(value)
        or bool(_TWO_SENTENCES_RE.search(value))
    )


def _top_words(page_text: str) -> set[str]:
    lines = [line for line in page_text.splitlines() if line.strip()][:_TOP_LINES]
    return set(fold_words("\n".join(lines)))


def title_agrees(title: str, page_text: str) -> bool:
    """Whether nearly every word of ``title`` is printed in the top lines of page one, and
    not as the first sentence of a paragraph (a test file's Info title ``This is a test
    document``, printed ``This is a test document. It only contains some text.``)."""
    words = fold_words(title)
    if len(words) < 2:
        return False
    flat = " ".join(page_text.split())
    if re.search(rf"(?:^|[.!?]\s){re.escape(' '.join(title.split()))}[.!?]\s+[A-Z]", flat):
        return False
    top = _top_words(page_text)
    return sum(w in top for w in words) >= _AGREE_SHARE * len(words)


def info_people(names: list[str], page_text: str) -> list[str]:
    """The Info authors, when the first is a person whose family name page one prints.

    An account name (``froscan``, ``Administrator``), a vendor (``Toshiba``), an agency or
    a form code is no person, or is not on the page: then none is kept.
    """
    if not names:
        return []
    first = names[0]
    if _alone_on_a_line(first, page_text):
        return [first]  # a single name printed on its own line, as on a title slide ("Narbel")
    person = (
        looks_like_name(first)
        and not any(is_affiliation_word(w) for w in first.split())
        and not any(w in _ORGANISATION_WORDS for w in fold_words(first))
    )
    printed = set(_letter_words(page_text))
    if not person or not set(_letter_words(first)) <= printed:
        return []  # every word of the name printed: "Mike Montgomery" is not "John J. Montgomery"
    return [n for n in names if looks_like_name(n)]


def is_noise_author(name: str) -> bool:
    """Whether a name read from the page is no author: an office, a public body, a vendor's
    support desk, a code (``PCR-CA-``), a phrase (``INSIDE THIS ISSUE``), or a table's
    column heads in capitals (``START END``)."""
    words = name.split()
    return (
        any(w in _ORGANISATION_WORDS or w in _PHRASE_WORDS for w in fold_words(name))
        or any(c.isdigit() for c in name)
        or name.rstrip().endswith("-")
        or bool(re.search(r"\b[A-Z][a-z]+-[a-z]", name))  # "Fifth-order", not "Jean-Pierre"
        or (name.isupper() and not any(w.endswith(".") for w in words) and len(words) <= 2)
    )


def _alone_on_a_line(name: str, page_text: str) -> bool:
    """Whether the one-word ``name`` is a whole line of the top of page one."""
    if len(name.split()) != 1 or len(name) < 3 or not name[:1].isupper():
        return False
    if name.casefold() in _ORGANISATION_WORDS or any(c.isdigit() for c in name):
        return False
    top = [" ".join(line.split()) for line in page_text.splitlines() if line.strip()]
    return name in top[:_TOP_LINES]


def _letter_words(text: str) -> list[str]:
    """:func:`fold_words` split at digits too (``Meresescu1,2`` is ``meresescu``)."""
    return [w for word in fold_words(text) for w in re.findall(r"[^\W\d]+", word)]
