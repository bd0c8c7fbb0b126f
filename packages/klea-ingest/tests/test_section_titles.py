"""Running heads that title a part of a document join its passages' heading chains.

A manual whose exhibits are all tables of the same line numbers and positions tells them
apart only by the running head over each exhibit's pages ("Command Code BMFOL Return Form
941 Display"); removed as page furniture, it left those passages without the words a
question names them by (issue 35, the IRS manual of realpapers-wild).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.chunking.doc_chunker import _with_section_title
from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline
from klea_utils.stores._ingest.pdf.page_furniture import section_titles
from klea_utils.stores._ingest.pdf.pdf_lines import PageLines
from realpapers import minilm_chunker

pytestmark = pytest.mark.timeout(300)


def _pages(heads: list[list[str]]) -> list[PageLines]:
    return [
        PageLines(page_no=i + 1, width=612, height=792, lines=[], raw_text="", running_heads=h)
        for i, h in enumerate(heads)
    ]


def test_a_head_over_a_run_of_pages_titles_them() -> None:
    heads = [["Manual"]] + [["Manual", "Form 941 Display"]] * 4 + [["Manual", "Form 8038B"]] * 3
    titles = section_titles(_pages(heads))
    assert titles == {
        2: "Form 941 Display",
        3: "Form 941 Display",
        4: "Form 941 Display",
        5: "Form 941 Display",
        6: "Form 8038B",
        7: "Form 8038B",
        8: "Form 8038B",
    }


def test_the_documents_own_head_a_lone_head_and_a_folio_title_nothing() -> None:
    # over every page (the document's name), on one page only, changing on every page
    heads = [["Annual Report", f"Report {2000 + i}"] for i in range(8)]
    heads[3].append("Exhibit 4 (Cont. 1)")
    assert section_titles(_pages(heads)) == {}


def test_a_few_pages_with_a_repeated_top_line_are_no_convention() -> None:
    # a figure's legend at the top of two pages of twenty
    heads: list[list[str]] = [[] for _ in range(20)]
    heads[4] = heads[5] = ["Wikipedia (en)"]
    assert section_titles(_pages(heads)) == {}


@given(st.lists(st.lists(st.sampled_from(["A b", "C d", "12", "E f g"]), max_size=3), max_size=30))
def test_titles_are_heads_repeated_over_part_of_the_document(heads: list[list[str]]) -> None:
    titles = section_titles(_pages(heads))
    assert not titles or len(titles) >= 0.25 * len(heads)

    def titles_a_part(head: str) -> bool:
        pages = [i for i, h in enumerate(heads) if head in h]
        return head != "12" and len(pages) >= 2 and pages[-1] - pages[0] + 1 <= len(heads) / 2

    for page, title in titles.items():
        assert title == "\n".join(h for h in dict.fromkeys(heads[page - 1]) if titles_a_part(h))


def test_the_chain_gets_the_title_once_after_the_documents_title() -> None:
    assert _with_section_title(("Doc", "2.1 Scope"), "Form 941", True) == (
        "Doc",
        "Form 941",
        "2.1 Scope",
    )
    assert _with_section_title(None, "Form 941", False) == ("Form 941",)
    assert _with_section_title(("Intro",), "Chapter 2", False) == ("Chapter 2", "Intro")
    # the chain already says it, in other case and punctuation
    assert _with_section_title(("Doc", "1. Introduction"), "1 INTRODUCTION", True) == (
        "Doc",
        "1. Introduction",
    )
    # a spread's two heads read as one line, under the sections it names
    assert _with_section_title(
        ("Doc", "6. Synthetic Data", "6.1. Choice Strategies"),
        "6.1 Choice Strategies 6 SYNTHETIC DATA",
        True,
    ) == ("Doc", "6. Synthetic Data", "6.1. Choice Strategies")
    # two heads on one page (a spread's left and right heads): each is its own line
    assert _with_section_title(
        ("Doc", "6. Synthetic Data"), "6.1 Choice Strategies\n6 SYNTHETIC DATA", True
    ) == ("Doc", "6.1 Choice Strategies", "6. Synthetic Data")


def _manual(path: Path) -> Path:
    """Eight pages: a constant head, an exhibit head over each run, a folio at the foot."""
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=(612, 792))
    for page in range(8):
        form = "941" if page < 4 else "8038B"
        pdf.setFont("Helvetica", 9)
        pdf.drawString(72, 760, "Command Codes and Their Displays")
        pdf.drawString(72, 730, f"Command Code Return Form {form} Display")
        pdf.setFont("Helvetica", 11)
        for row in range(20):
            text = f"Line {row + 1} of page {page + 1}: the display's field reads on here."
            if page == 5 and row == 7:
                text = "Line 1 in positions 18-19 shows the MFT 85 of this return."
            pdf.drawString(72, 620 - 22 * row, text)
        pdf.drawString(300, 40, str(page + 101))
        pdf.showPage()
    pdf.save()
    return path


def test_a_manuals_exhibit_heads_reach_its_passages(tmp_path: Path) -> None:
    path = _manual(tmp_path / "manual.pdf")
    document, recovery = convert_pdf_offline(path, do_ocr=False)
    assert recovery.section_titles[6] == "Command Code Return Form 8038B Display"
    assert recovery.section_titles[2] == "Command Code Return Form 941 Display"
    docs = minilm_chunker().chunk(
        document, file_name=path.name, file_hash="h", section_titles=recovery.section_titles
    )
    answer = next(d for d in docs if "MFT 85" in d.page_content)
    assert "Command Code Return Form 8038B Display" in answer.metadata["headings"]
    assert answer.page_content.startswith(
        "\n".join(answer.metadata["headings"])
    )  # the chain is embedded with the text
    for doc in docs:
        # the document-wide head stays furniture, and no head is left in the body text
        assert "Command Codes and Their Displays" not in doc.page_content
        body = doc.page_content.split("\n")[len(doc.metadata["headings"]) :]
        assert not any("Return Form" in line for line in body)
    # without the titles (a caller that does not pass them) the chunks are as before
    plain = minilm_chunker().chunk(document, file_name=path.name, file_hash="h")
    assert all("Return Form" not in d.page_content for d in plain)
