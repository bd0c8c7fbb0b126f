"""The import-linter contracts name every module of each distribution, and they hold.

``klea_utils.stores`` is a namespace shared by klea-retrieval and klea-ingest, so the
contracts in the root ``pyproject.toml`` list its top-level modules by distribution; a
module added to a distribution and left out of the lists would escape them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _top_level(package: str) -> set[str]:
    stores = ROOT / "packages" / package / "src" / "klea_utils" / "stores"
    names = {p.stem for p in stores.glob("*.py")}
    names |= {p.name for p in stores.iterdir() if (p / "__init__.py").is_file()}
    return {f"klea_utils.stores.{n}" for n in names}


def _contract(name: str) -> dict[str, list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"] == name)


def test_the_contracts_list_every_top_level_module_of_each_distribution() -> None:
    retrieval, ingest = _top_level("klea-retrieval"), _top_level("klea-ingest")
    never = _contract("klea-retrieval never imports klea-ingest")
    assert set(never["source_modules"]) == retrieval
    assert set(never["forbidden_modules"]) == ingest
    public_only = _contract("klea-ingest imports only klea-retrieval's public modules")
    assert set(public_only["source_modules"]) == ingest
    private = {m for m in retrieval if m.rsplit(".", 1)[1].startswith("_")}
    assert private <= set(public_only["forbidden_modules"])


def test_the_contracts_hold() -> None:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint is None and not os.environ.get("CI"):
        pytest.skip("import-linter is not installed (it is in the lint dependency group)")
    assert lint is not None, "import-linter must be installed under CI"
    result = subprocess.run(
        [lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
