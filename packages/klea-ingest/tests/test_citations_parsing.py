"""Reference parsing on generated text: the section, the entry split, the identifiers.

Property tests generate reference lists in each style and identifiers spaced or broken
the way PDF text layers print them; the real papers are in ``test_citations_realpapers.py``.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.citations.callouts import CitationContext
from klea_utils.stores._ingest.citations.entry_split import split_entries
from klea_utils.stores._ingest.citations.identifiers import find_arxiv, find_doi
from klea_utils.stores._ingest.citations.paper_citations import PaperCitations, parse_citations
from klea_utils.stores._ingest.citations.parse import ParsedReference, parse_references
from klea_utils.stores._ingest.citations.reference_section import find_reference_section

SURNAMES = st.sampled_from(
    ["Smith", "Lee", "Garcia", "O'Brien", "van Dam", "Müller", "Nakajima", "Price", "Costa"]
)
WORDS = st.lists(
    st.sampled_from(
        ["quantum", "learning", "residence", "time", "models", "of", "the", "causal", "graphs"]
    ),
    min_size=2,
    max_size=9,
)
YEARS = st.integers(min_value=1950, max_value=2025)


@st.composite
def entries(draw: st.DrawFn) -> tuple[str, str, str, int]:
    """(initials, surname, title, year) of one generated entry."""
    initials = draw(st.sampled_from(["A.", "J. S.", "M.-Y.", "R. W."]))
    surname = draw(SURNAMES).replace("van Dam", "Dam")
    title = " ".join(draw(WORDS)).capitalize()
    return initials, surname, title, draw(YEARS)


def _paragraphs(parts: list[str], breaks: list[bool]) -> str:
    out = parts[0]
    for index, part in enumerate(parts[1:]):
        cut = breaks[index] if index < len(breaks) else False
        out += ("\n\n" if cut else " ") + part
    return out


@given(st.lists(entries(), min_size=3, max_size=25), st.lists(st.booleans(), max_size=25))
def test_numbered_lists_split_into_their_entries(
    items: list[tuple[str, str, str, int]], breaks: list[bool]
) -> None:
    parts = [
        f"[{n}] {i} {s}, “{t},” Phys. Rev. A {n + 10}, 0{n}2108 ({y}). arXiv:1612.07250 [quant-ph]."
        for n, (i, s, t, y) in enumerate(items, start=1)
    ]
    found = split_entries(_paragraphs(parts, breaks))
    assert [e.label for e in found] == [str(n) for n in range(1, len(items) + 1)]
    assert all(e.style == "numbered" for e in found)


@given(st.lists(entries(), min_size=3, max_size=25), st.lists(st.booleans(), max_size=25))
def test_dotted_lists_split_into_their_entries(
    items: list[tuple[str, str, str, int]], breaks: list[bool]
) -> None:
    parts = [f"{n}. {i} {s}. {t}. J. Chem. {n}, {y}." for n, (i, s, t, y) in enumerate(items, 1)]
    found = split_entries(_paragraphs(parts, breaks))
    assert len(found) == len(items)
    assert [e.label for e in found] == [str(n) for n in range(1, len(items) + 1)]


@given(st.lists(entries(), min_size=3, max_size=25), st.lists(st.booleans(), max_size=25))
def test_author_year_lists_split_into_their_entries(
    items: list[tuple[str, str, str, int]], breaks: list[bool]
) -> None:
    parts = [
        f"{s}, {i}, & Lee, K. ({y}). {t}. Water Resources Research, 4{n}, 1{n}–2{n}."
        for n, (i, s, t, y) in enumerate(items)
    ]
    found = split_entries(_paragraphs(parts, breaks))
    assert len(found) == len(items)
    assert all(e.style == "author-year" for e in found)


@given(entries())
def test_fields_of_an_author_year_entry(item: tuple[str, str, str, int]) -> None:
    initials, surname, title, year = item
    text = f"References\n\n{surname}, {initials} ({year}). {title}. Journal of Tests, 12, 1–9."
    (ref,) = parse_references(text + "\n\n" + text.split("\n\n")[1].replace(surname, "Zed"))[:1]
    assert ref.year == year
    assert ref.title == title
    assert ref.authors[0] == f"{initials} {surname}"
    assert ref.venue == "Journal of Tests"


DOI_SUFFIX = st.from_regex(
    r"[a-z][a-z0-9]{0,5}(\.[a-z0-9]{1,6}){0,3}(-[0-9]{1,4})?", fullmatch=True
)


@given(st.integers(1000, 999999), DOI_SUFFIX, st.data())
def test_a_doi_is_read_also_when_spaced_or_broken(
    registrant: int, suffix: str, data: st.DataObject
) -> None:
    doi = f"10.{registrant}/{suffix}"
    # as text layers print them: " . " or " ." around a dot, a space or a line end after "/"
    spaced = re.sub(
        r"[./]",
        lambda m: (
            data.draw(st.sampled_from([".", " . ", " ."]))
            if m.group(0) == "."
            else data.draw(st.sampled_from(["/", "/ ", "/\n"]))
        ),
        doi,
    )
    text = f"Water Research, 12, 1–9. doi:{spaced}. Next, A. (2001)."
    assert find_doi(text) == doi


@given(st.integers(7, 25), st.integers(1, 12), st.integers(1, 99999), st.data())
def test_an_arxiv_id_is_read_also_when_spaced(
    year: int, month: int, number: int, data: st.DataObject
) -> None:
    width = 5 if year >= 15 else 4
    if number >= 10**width:
        number //= 10
    arxiv = f"{year:02d}{month:02d}.{number:0{width}d}"
    gap = data.draw(st.sampled_from(["", " "]))
    prefix = data.draw(st.sampled_from(["arXiv:", "arXiv: ", "arXiv preprint arXiv:", "abs/"]))
    text = f"Some title. {prefix}{arxiv.replace('.', gap + '.' + gap)} [quant-ph]."
    assert find_arxiv(text) == arxiv


def test_old_style_arxiv_ids_and_lanl_archive_numbers() -> None:
    assert find_arxiv("Preprint, 2000, available at math.SG/0012067.") == "math.SG/0012067"
    assert find_arxiv("in Proc. STOC, 2006. arXiv:quant-ph/0611234.") == "quant-ph/0611234"
    assert find_arxiv("preprint available from the LANL quant-ph archive 9802049, 1998") == (
        "quant-ph/9802049"
    )
    assert find_arxiv("https : //doi . org/10 .48550/arX iv.2408.15664.") == "2408.15664"


def test_the_longer_reading_of_a_doi_printed_twice_wins() -> None:
    text = "doi: 10.1145/345881 7.3476145. URL http: //dx.doi . org/10 . 1145/3458817.3476145."
    assert find_doi(text) == "10.1145/3458817.3476145"


def test_no_identifier_is_read_from_plain_numbers() -> None:
    assert find_doi("Phys. Rev. A 71, 052108 (2005). pp. 10.5-20.") is None
    assert find_arxiv("Nature 510, 351–355 (2014), vol. 1612.07250") is None


def test_the_section_ends_at_an_appendix_and_continues_past_a_false_heading() -> None:
    text = (
        "# A paper\n\nBody text (2020) here.\n\n## Bibliography\n\n"
        "[1] A. Smith, “One,” Phys. Rev. 1, 2 (2001). "
        "[2] B. Lee, “Two,” Phys. Rev. 3, 4 (2002).\n\n"
        "## Phys. Rev. Lett. 5, 6 (2003)\n\n[3] C. Wu, “Three,” Nature 7, 8 (2004).\n\n"
        "## A Proofs of the lemmas\n\nLemma 1 holds because [1] says so."
    )
    section = find_reference_section(text)
    assert "Three" in section
    assert "Lemma 1" not in section
    assert [r.label for r in parse_references(text)] == ["1", "2", "3"]


def test_a_references_section_after_an_appendix_and_printed_twice() -> None:
    text = (
        "## 8. Conclusion\n\nWe conclude.\n\n## Appendix A. Proof\n\nThe proof (2019).\n\n"
        "## References\n\n### References\n\n"
        "Smith, J. (2001). First title. Journal, 1, 2–3.\n\n"
        "Lee, K., & Wu, C. (2002). Second title. Journal, 4, 5–6."
    )
    refs = parse_references(text)
    assert [r.title for r in refs] == ["First title", "Second title"]
    assert refs[1].authors == ("K. Lee", "C. Wu")


def test_literature_cited_heading_in_plain_text() -> None:
    text = (
        "Discussion ends here.\nLiterature Cited\n"
        "1. Smith J, Lee K. A first title. Ecology. 2001;12:1-9.\n"
        "2. Wu C. A second title. Ecology. 2002;13:2-9.\n"
        "3. Chen X. A third title. Ecology. 2003;14:3-9.\n"
    )
    assert [r.year for r in parse_references(text)] == [2001, 2002, 2003]


def test_text_without_a_reference_heading_has_no_entries() -> None:
    assert parse_references("# Title\n\nSome text citing [1] and Smith (2020).") == []


def test_a_reference_needs_text() -> None:
    import pytest

    with pytest.raises(ValueError, match="empty text"):
        ParsedReference(label="3", text="  ")


# -- callouts --------------------------------------------------------------------------------


def _numbered_paper(count: int, body: str) -> str:
    entries = " ".join(
        f"[{n}] A. Author{n}, “Title number {n},” Phys. Rev. A {n}, 1{n} (20{n % 90 + 10:02d})."
        for n in range(1, count + 1)
    )
    return f"# Paper\n\n{body}\n\n## References\n\n{entries}"


@given(
    st.lists(st.tuples(st.integers(1, 40), st.integers(0, 5)), min_size=1, max_size=6, unique=True),
    st.sampled_from([", ", ",", "; "]),
    st.sampled_from(["-", "\u2013"]),
)
def test_bracketed_callouts_with_ranges_link_every_number(
    spans: list[tuple[int, int]], glue: str, dash: str
) -> None:
    parts = [str(a) if not w else f"{a}{dash}{a + w}" for a, w in spans]
    body = f"Earlier work [{glue.join(parts)}] showed it. Nothing is cited here."
    paper = parse_citations(_numbered_paper(50, body))
    want = {n - 1 for a, w in spans for n in range(a, a + w + 1)}
    assert {c.entry for c in paper.contexts} == want
    assert all("showed it" in c.sentence for c in paper.contexts)


def test_brackets_that_are_not_all_labels_link_nothing() -> None:
    body = "The interval [0, 1] and the class [ω] and [3, x] are no callouts; [2] is one."
    paper = parse_citations(_numbered_paper(5, body))
    assert [(c.entry, c.callout) for c in paper.contexts] == [(1, "[2]")]


def test_author_year_callouts_in_parentheses_and_in_the_sentence() -> None:
    text = (
        "# Paper\n\nDeconvolution is parametric (Neuman & De Marsily, 1976; Smith et al., "
        "2020a) or not Smith and Lee (2020b). Jones (1999) is not in the list.\n\n"
        "## References\n\n"
        "Neuman, S. P., & De Marsily, G. (1976). Identification of linear systems. WRR, 12.\n\n"
        "Smith, J., Lee, K., & Wu, C. (2020a). First of the year. Journal, 1, 2–3.\n\n"
        "Smith, J., & Lee, K. (2020b). Second of the year. Journal, 4, 5–6."
    )
    paper = parse_citations(text)
    linked = sorted((c.entry, c.callout) for c in paper.contexts)
    assert linked == [
        (0, "(Neuman & De Marsily, 1976; Smith et al., 2020a)"),
        (1, "(Neuman & De Marsily, 1976; Smith et al., 2020a)"),
        (2, "Smith and Lee (2020b)"),
    ]
    assert paper.sentences_citing(2) == [
        "Deconvolution is parametric (Neuman & De Marsily, 1976; Smith et al., 2020a) or not "
        "Smith and Lee (2020b)."
    ]


def test_a_context_must_name_an_entry_of_the_list() -> None:
    import pytest

    with pytest.raises(ValueError, match="past the 0 references"):
        PaperCitations(references=(), contexts=(CitationContext(0, "[1]", "See [1]."),))


def test_full_given_names_and_vancouver_author_lists_split() -> None:
    acl = (
        "Eugene Agichtein and L. Gravano. 2000. Snowball: Extracting Relations from Large "
        "Plaintext Collections. In Proceedings of DL-00. Sergey Brin. 1998. Extracting "
        "Patterns and Relations from the World Wide Web. In WebDB Workshop. Kiyoshi Sudo, "
        "Satoshi Sekine, and Ralph Grishman. 2003. An Improved Extraction Pattern "
        "Representation Model. In Proceedings of ACL-03."
    )
    assert [e.text.split(".")[0] for e in split_entries(acl)] == [
        "Eugene Agichtein and L",
        "Sergey Brin",
        "Kiyoshi Sudo, Satoshi Sekine, and Ralph Grishman",
    ]
    vancouver = (
        "Afgan E, Baker D, van den Beek M. 2016. The Galaxy platform. Nucleic Acids Research "
        "44(W1):W3-W10 DOI 10.1093/nar/gkw343. Altschul SF, Madden TL. 1997. Gapped BLAST. "
        "Nucleic Acids Research 25(17):3389. In K. Inui, editor. Eddy SR. 1998. Profile "
        "hidden Markov models. Bioinformatics 14(9):755-763."
    )
    found = split_entries(vancouver)
    assert [e.text.split(" ")[0] for e in found] == ["Afgan", "Altschul", "Eddy"]
    assert "In K. Inui" in found[1].text
