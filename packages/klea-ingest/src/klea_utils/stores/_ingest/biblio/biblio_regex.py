"""Regular-expression extraction of bibliographic fields from plain text.

Two passes use these: one over the top of page one (title, authors, journal, year) and one
over the first :data:`HEAD_CHARS` characters of the document (DOI, keywords, authors, URLs).
This module gathers what those passes call; each part lives in a module with one job:

- :mod:`.head_fields`: DOI, URLs, keywords and year anywhere in the head;
- :mod:`.line_kinds`: lines that are never a title (boilerplate, headings, labels);
- :mod:`.author_lines`: person and organisation names in author lines;
- :mod:`.bylines`: the byline under a title, the title line and the fallback title.
"""

from __future__ import annotations

from klea_utils.stores._ingest.biblio.author_lines import (
    AUTHORS_RE,
    NOT_NAME_STARTS,
    clean_name_text,
    find_authors,
    looks_like_name,
    organisation_name,
)
from klea_utils.stores._ingest.biblio.bylines import (
    Byline,
    author_names,
    find_byline,
    find_title_and_authors,
    first_text_line,
    parse_byline,
)
from klea_utils.stores._ingest.biblio.head_fields import (
    DOI_RE,
    HEAD_CHARS,
    KEYWORDS_RE,
    URL_RE,
    YEAR_RE,
    find_doi,
    find_keywords,
    find_urls,
    find_year,
    split_list,
    strip_doi,
)
from klea_utils.stores._ingest.biblio.line_kinds import (
    TOP_LINES,
    is_banner,
    is_label_line,
    is_section_heading,
    never_title,
    top_lines,
)

__all__ = [
    "AUTHORS_RE",
    "DOI_RE",
    "HEAD_CHARS",
    "KEYWORDS_RE",
    "NOT_NAME_STARTS",
    "TOP_LINES",
    "URL_RE",
    "YEAR_RE",
    "Byline",
    "author_names",
    "clean_name_text",
    "find_authors",
    "find_byline",
    "find_doi",
    "find_keywords",
    "find_title_and_authors",
    "find_urls",
    "find_year",
    "first_text_line",
    "is_banner",
    "is_label_line",
    "is_section_heading",
    "looks_like_name",
    "never_title",
    "organisation_name",
    "parse_byline",
    "split_list",
    "strip_doi",
    "top_lines",
]
