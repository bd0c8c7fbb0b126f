"""From your own folder to answers, through the command lines only.

A folder with a broken PDF, an organised pre-check (``ocr/`` and ``no-ocr/`` copies) and
a second subfolder: ``build`` stores everything else and exits 0, naming the broken file;
the ``klea-retrieve`` command it prints answers a question with the right file first; the
stores configuration it writes, with relative paths, works from another folder.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
from integration_cli import SAMPLE_PAPERS, run_command

pytestmark = pytest.mark.slow


def _first_file(out: str) -> str:
    hits = next(iter(json.loads(out).values()))
    return str(hits[0]["metadata"]["file_name"])


def test_own_folder_from_build_to_answers(tmp_path: Path) -> None:
    folder = tmp_path / "my-papers"
    (folder / "second").mkdir(parents=True)
    shutil.copy(SAMPLE_PAPERS / "climate-sensitivity.pdf", folder)
    shutil.copy(SAMPLE_PAPERS / "crispr-off-target.md", folder)
    shutil.copy(SAMPLE_PAPERS / "dark-matter-dwarf-galaxies.md", folder / "second")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog")

    organised = run_command(
        "klea-stores-create", "pre-check", str(folder), "--organise", cwd=tmp_path
    )
    assert organised.returncode == 0, organised.stderr
    assert (folder / "no-ocr" / "second" / "dark-matter-dwarf-galaxies.md").is_file()

    built = run_command(
        "klea-stores-create",
        "build",
        "my-papers",
        "--store",
        "chroma:stores/chroma",
        "--collection",
        "papers",
        "--bm25-store",
        "stores/papers.bm25",
        "--fts5-store",
        "stores/papers.sqlite",
        "--max-tokens",
        "256",
        "--write-stores-config",
        "stores/stores.json",
        cwd=tmp_path,
    )
    assert built.returncode == 0, built.stderr
    assert "Summary: 3 file(s) added" in built.stdout  # each paper once, the broken one not
    summary = [ln for ln in built.stderr.splitlines() if ln.startswith("1 file(s) not stored")]
    assert len(summary) == 1
    assert summary[0].startswith("1 file(s) not stored: broken.pdf (")
    assert "damaged or truncated" in summary[0]

    lines = built.stdout.splitlines()
    command = shlex.split(lines[lines.index("Query what you built:") + 1])
    assert command[0] == "klea-retrieve"
    question = "What is the likely range of equilibrium climate sensitivity?"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    answered = run_command(*command[:-1], "--json", question, cwd=elsewhere)
    assert answered.returncode == 0, answered.stderr
    assert _first_file(answered.stdout) == "climate-sensitivity.pdf"

    config = json.loads((tmp_path / "stores" / "stores.json").read_text())
    assert config["domains"]["papers"]["bm25_stores"][0]["path"] == "papers.bm25"
    crispr = "Which features predict off-target cleavage by Cas9?"
    relative = run_command(
        "klea-retrieve", "--stores-config", "../stores/stores.json", "--json", crispr, cwd=elsewhere
    )
    assert relative.returncode == 0, relative.stderr
    assert _first_file(relative.stdout) == "crispr-off-target.md"

    lexical = run_command(
        "klea-retrieve",
        "--bm25-store",
        "fts5:../stores/papers.sqlite",
        "--json",
        "dwarf galaxies dark matter",
        cwd=elsewhere,
    )
    assert lexical.returncode == 0, lexical.stderr
    assert _first_file(lexical.stdout) == "dark-matter-dwarf-galaxies.md"
