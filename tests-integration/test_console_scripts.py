"""Every console script the workspace declares answers ``--help`` with exit code 0."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def declared_scripts() -> list[str]:
    names: list[str] = []
    for manifest in sorted(ROOT.glob("packages/*/pyproject.toml")):
        project = tomllib.loads(manifest.read_text())["project"]
        names.extend(project.get("scripts", {}))
    return names


def test_each_package_declares_its_command() -> None:
    assert set(declared_scripts()) == {
        "sci-etl-search",
        "klea-retrieve",
        "klea-serve",
        "klea-stores-create",
    }


@pytest.mark.parametrize("script", declared_scripts())
def test_console_script_answers_help(script: str) -> None:
    executable = shutil.which(script)
    assert executable, f"{script} is not installed in this environment"
    result = subprocess.run(
        [executable, "--help"], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "usage" in result.stdout.lower()
