"""Write the sample corpus the demo ingests: twelve short papers written for this project.

Run from the repository root with ``uv run --frozen python examples/corpus/generate.py``.
It writes Markdown, HTML, DOCX, text PDFs (reportlab) and one scanned PDF (a page rendered
to an image with Pillow and saved as an image-only PDF, so only OCR can read it) into
``examples/corpus/papers/``. The output is committed; the script documents how it was made.
"""

from __future__ import annotations

import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

OUT = Path(__file__).resolve().parent / "papers"


@dataclass(frozen=True)
class Paper:
    stem: str
    fmt: str
    title: str
    authors: tuple[str, ...]
    year: int
    journal: str
    doi: str
    sections: tuple[tuple[str, str], ...]


PAPERS = (
    Paper(
        "dark-matter-dwarf-galaxies",
        "md",
        "Dark matter halos of dwarf galaxies",
        ("Ana Ortiz", "Liam Chen"),
        2021,
        "Journal of Galactic Studies",
        "10.5555/jgs.2021.014",
        (
            (
                "Abstract",
                "Dwarf spheroidal galaxies are dominated by dark matter. We measure "
                "stellar velocity dispersions in eight dwarfs and fit cored and cuspy halo "
                "profiles. Cored profiles fit six of the eight galaxies better.",
            ),
            (
                "Observations",
                "Spectra of 1,200 red giant stars were taken with a multi-object "
                "spectrograph. Line-of-sight velocities have a median error of 2 km/s.",
            ),
            (
                "Results",
                "The inferred halo core radii range from 150 to 600 parsec. Feedback "
                "from supernovae can flatten a cusp into a core when star formation is bursty.",
            ),
        ),
    ),
    Paper(
        "crispr-off-target",
        "md",
        "Predicting CRISPR off-target cleavage",
        ("Maya Gupta", "Tom Becker"),
        2023,
        "Genome Methods",
        "10.5555/gm.2023.101",
        (
            (
                "Abstract",
                "Cas9 can cut DNA at sites that resemble the guide sequence. We "
                "train a model on 40,000 measured cleavage sites to predict off-target activity.",
            ),
            (
                "Methods",
                "Mismatches near the protospacer adjacent motif reduce cleavage most. "
                "Features encode mismatch position, bulges and chromatin accessibility.",
            ),
            (
                "Results",
                "The model ranks true off-target sites above decoys with an area under "
                "the curve of 0.94, outperforming sequence-only scores.",
            ),
        ),
    ),
    Paper(
        "bm25-revisited",
        "md",
        "BM25 revisited: term saturation and length normalization",
        ("Sara Lind",),
        2019,
        "Information Retrieval Letters",
        "10.5555/irl.2019.007",
        (
            (
                "Abstract",
                "Okapi BM25 ranks documents by term frequency with saturation and "
                "by document length normalization. We revisit its parameters k1 and b on "
                "scientific abstracts.",
            ),
            (
                "Experiments",
                "On three test collections the default k1 of 1.2 and b of 0.75 "
                "are within two points of the best nDCG. Field weighting of titles helps more.",
            ),
        ),
    ),
    Paper(
        "sleep-memory-consolidation",
        "md",
        "Sleep spindles and memory consolidation",
        ("Ines Moreau", "Kofi Mensah"),
        2020,
        "Neuroscience Reports",
        "10.5555/nr.2020.033",
        (
            (
                "Abstract",
                "Sleep spindles during non-REM sleep predict overnight retention of "
                "declarative memories. We record spindles in 60 volunteers after word learning.",
            ),
            (
                "Findings",
                "Spindle density correlated with recall improvement. Targeted memory "
                "reactivation with sound cues increased spindle activity and retention.",
            ),
        ),
    ),
    Paper(
        "coral-bleaching-heatwaves",
        "html",
        "Marine heatwaves and coral bleaching thresholds",
        ("Hana Sato", "Diego Ruiz"),
        2022,
        "Ocean Ecology",
        "10.5555/oe.2022.058",
        (
            (
                "Abstract",
                "Corals bleach when sea temperatures stay above their summer maximum. "
                "We relate degree heating weeks to bleaching severity on 120 reefs.",
            ),
            (
                "Results",
                "Bleaching became severe above eight degree heating weeks. Reefs that "
                "experienced earlier heatwaves bleached less, suggesting acclimatization.",
            ),
        ),
    ),
    Paper(
        "transformer-attention",
        "html",
        "Attention heads in transformer language models",
        ("Yuki Tanaka",),
        2024,
        "Machine Learning Review",
        "10.5555/mlr.2024.120",
        (
            (
                "Abstract",
                "Self-attention lets each token weigh every other token. We probe "
                "which attention heads track syntax and which copy earlier tokens.",
            ),
            (
                "Analysis",
                "Induction heads copy a token that followed an earlier occurrence of "
                "the current token. Pruning them removes in-context learning.",
            ),
        ),
    ),
    Paper(
        "antibiotic-resistance-soil",
        "docx",
        "Antibiotic resistance genes in agricultural soil",
        ("Peter Novak", "Lena Fischer"),
        2018,
        "Environmental Microbiology",
        "10.5555/em.2018.077",
        (
            (
                "Abstract",
                "Manure spread on fields carries antibiotic resistance genes. We "
                "sequence soil before and after manure application on twelve farms.",
            ),
            (
                "Results",
                "Resistance gene abundance rose tenfold after application and returned "
                "near baseline within four months, except for tetracycline resistance.",
            ),
        ),
    ),
    Paper(
        "malaria-vaccine-trial",
        "docx",
        "A malaria vaccine trial in young children",
        ("Amina Diallo", "John Carter"),
        2023,
        "Tropical Medicine",
        "10.5555/tm.2023.019",
        (
            (
                "Abstract",
                "We report a randomized trial of a malaria vaccine in 4,800 children "
                "aged five to seventeen months.",
            ),
            (
                "Results",
                "Vaccine efficacy against clinical malaria was 75 percent over twelve "
                "months with a booster dose given before the rainy season.",
            ),
        ),
    ),
    Paper(
        "quantum-error-correction",
        "pdf",
        "Surface code error correction below threshold",
        ("Marta Kowalska", "Ravi Iyer"),
        2024,
        "Quantum Devices",
        "10.5555/qd.2024.003",
        (
            (
                "Abstract",
                "Quantum error correction protects logical qubits when physical error "
                "rates are below a threshold. We run a distance-five surface code on 49 qubits.",
            ),
            (
                "Results",
                "The logical error rate fell by a factor of two when the code distance "
                "grew from three to five, the signature of operation below threshold.",
            ),
        ),
    ),
    Paper(
        "graphene-thermal-conductivity",
        "pdf",
        "Thermal conductivity of suspended graphene",
        ("Oleg Petrov",),
        2017,
        "Applied Materials Physics",
        "10.5555/amp.2017.044",
        (
            (
                "Abstract",
                "Suspended single-layer graphene conducts heat exceptionally well. We "
                "measure thermal conductivity with Raman thermometry.",
            ),
            (
                "Results",
                "Conductivity near room temperature exceeded 3,000 W/mK and decreased "
                "with grain boundaries and substrate contact.",
            ),
        ),
    ),
    Paper(
        "climate-sensitivity",
        "pdf",
        "Constraining equilibrium climate sensitivity",
        ("Nora Berg", "Samuel Okafor"),
        2020,
        "Climate Dynamics Letters",
        "10.5555/cdl.2020.090",
        (
            (
                "Abstract",
                "Equilibrium climate sensitivity is the warming after a doubling of "
                "carbon dioxide. We combine paleoclimate, historical and process evidence.",
            ),
            (
                "Results",
                "The likely range is 2.6 to 3.9 degrees Celsius. Cloud feedbacks "
                "remain the largest source of uncertainty.",
            ),
        ),
    ),
    Paper(
        "protein-folding-scanned",
        "scanned-pdf",
        "Chaperones and protein folding in the cell",
        ("Elena Rossi",),
        2016,
        "Cell Biology Notes",
        "10.5555/cbn.2016.012",
        (
            (
                "Abstract",
                "Molecular chaperones help newly made proteins fold and prevent "
                "aggregation. Heat shock proteins are induced by stress.",
            ),
            (
                "Results",
                "Without the chaperonin, half of the tested proteins aggregated at 42 "
                "degrees, while with it most folded correctly.",
            ),
        ),
    ),
)


def byline(paper: Paper) -> str:
    return f"{', '.join(paper.authors)}. {paper.journal}, {paper.year}. doi:{paper.doi}"


def write_md(paper: Paper, path: Path) -> None:
    parts = [f"# {paper.title}", "", byline(paper), ""]
    for heading, text in paper.sections:
        parts += [f"## {heading}", "", text, ""]
    path.write_text("\n".join(parts), encoding="utf-8")


def write_html(paper: Paper, path: Path) -> None:
    body = "".join(f"<h2>{h}</h2><p>{t}</p>" for h, t in paper.sections)
    path.write_text(
        f"<!DOCTYPE html><html><head><title>{paper.title}</title></head><body>"
        f"<h1>{paper.title}</h1><p>{byline(paper)}</p>{body}</body></html>",
        encoding="utf-8",
    )


def write_docx(paper: Paper, path: Path) -> None:
    import docx

    document = docx.Document()
    document.core_properties.title = paper.title
    document.core_properties.author = "; ".join(paper.authors)
    document.add_heading(paper.title, level=1)
    document.add_paragraph(byline(paper))
    for heading, text in paper.sections:
        document.add_heading(heading, level=2)
        document.add_paragraph(text)
    document.save(str(path))


def pdf_lines(paper: Paper) -> list[tuple[str, str]]:
    lines = [("title", paper.title), ("body", byline(paper))]
    for heading, text in paper.sections:
        lines.append(("heading", heading))
        lines += [("body", line) for line in textwrap.wrap(text, 80)]
    return lines


def write_pdf(paper: Paper, path: Path) -> None:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.setTitle(paper.title)
    pdf.setAuthor("; ".join(paper.authors))
    y = A4[1] - 72
    for kind, text in pdf_lines(paper):
        size = {"title": 16, "heading": 13}.get(kind, 10)
        pdf.setFont("Helvetica-Bold" if kind != "body" else "Helvetica", size)
        y -= size + 8 if kind != "body" else size + 4
        pdf.drawString(72, y, text)
    pdf.save()


def write_scanned_pdf(paper: Paper, path: Path) -> None:
    from PIL import Image, ImageDraw, ImageFont

    page = Image.new("L", (1240, 1754), 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=30)
    y = 120
    for kind, text in pdf_lines(paper):
        y += 60 if kind != "body" else 44
        draw.text((100, y), text, fill=0, font=font)
    page.save(path, "PDF", resolution=150.0)


WRITERS = {
    "md": write_md,
    "html": write_html,
    "docx": write_docx,
    "pdf": write_pdf,
    "scanned-pdf": write_scanned_pdf,
}
SUFFIX = {"md": ".md", "html": ".html", "docx": ".docx", "pdf": ".pdf", "scanned-pdf": ".pdf"}


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    for paper in PAPERS:
        WRITERS[paper.fmt](paper, OUT / f"{paper.stem}{SUFFIX[paper.fmt]}")
    print(f"wrote {len(PAPERS)} papers to {OUT}")


if __name__ == "__main__":
    main()
