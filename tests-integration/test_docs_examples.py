"""Every ```python block in the docs and READMEs runs, so the docs cannot drift from the code.

Each block runs as its own script in a fresh interpreter, with an empty temporary directory
as its working directory. Blocks meant only to be read are written as ``text`` or
``console`` blocks instead.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
SOURCES = sorted(
    [*ROOT.glob("docs/**/*.md"), ROOT / "README.md", *ROOT.glob("packages/*/README.md")]
)


def examples() -> list[tuple[str, str]]:
    found = []
    for source in SOURCES:
        text = source.read_text(encoding="utf-8")
        for number, match in enumerate(BLOCK.finditer(text), start=1):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{source.relative_to(ROOT)}:{line}#{number}", match.group(1)))
    return found


EXAMPLES = examples()


def test_docs_have_examples() -> None:
    assert EXAMPLES, "no python examples found in the docs"


@pytest.mark.parametrize(("where", "code"), EXAMPLES, ids=[w for w, _ in EXAMPLES])
def test_doc_example_runs(where: str, code: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, f"{where} failed:\n{result.stdout}\n{result.stderr}"
