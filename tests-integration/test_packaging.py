"""The three distributions build as wheels and install and import on their own.

Each wheel goes into a fresh virtual environment with its declared dependencies (pinned to
the versions in ``uv.lock``), and nothing else from the workspace. This proves that
``klea_utils`` and ``klea_utils.stores`` work as namespace packages shared by two
distributions: ``klea-retrieval`` alone gives the retrieval modules and none of the
ingestion modules, and with ``klea-ingest`` both import cleanly.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

RETRIEVAL_MODULES = [
    "klea_utils.stores.config",
    "klea_utils.stores.metadata",
    "klea_utils.stores.filters",
    "klea_utils.stores.query_schema",
    "klea_utils.stores.langchain_bm25",
    "klea_utils.stores.utils",
    "klea_utils.stores.retrieval.base",
    "klea_utils.stores.retrieval.vs",
    "klea_utils.stores.retrieval.bm25",
    "klea_utils.stores.exceptions",
]
INGEST_MODULES = [
    "klea_utils.stores.ingestion",
    "klea_utils.stores.chunk_worker",
    "klea_utils.stores.precheck",
    "klea_utils.stores.postcheck",
    "klea_utils.stores.map_lint",
    "klea_utils.stores.ingest_exceptions",
]


def run(*args: str | Path, cwd: Path = ROOT) -> str:
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"{args} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    run("uv", "build", "--all-packages", "--no-sources", "--wheel", "--out-dir", out)
    built = {p.name.split("-")[0].replace("_", "-"): p for p in out.glob("*.whl")}
    assert set(built) == {"sci-etl-search", "klea-retrieval", "klea-ingest"}
    return built


def fresh_venv(
    tmp_path: Path, wheels: dict[str, Path], dist: str, extras: str = ""
) -> Iterator[Path]:
    constraints = tmp_path / "constraints.txt"
    run(
        "uv",
        "export",
        "--frozen",
        "--package",
        dist,
        "--all-extras",
        "--no-emit-workspace",
        "--no-hashes",
        "--no-header",
        "--no-dev",
        "--output-file",
        constraints,
    )
    venv = tmp_path / "venv"
    run("uv", "venv", "--quiet", "--python", sys.executable, venv)
    python = venv / "bin" / "python"
    run(
        "uv",
        "pip",
        "install",
        "--quiet",
        "--python",
        python,
        "--find-links",
        wheels[dist].parent,
        "--constraints",
        constraints,
        f"{wheels[dist]}{extras}",
    )
    yield python


def imports(python: Path, modules: list[str]) -> dict[str, bool]:
    probe = (
        "import importlib, json, sys\n"
        "ok = {}\n"
        "for m in sys.argv[1:]:\n"
        "    try:\n"
        "        importlib.import_module(m); ok[m] = True\n"
        "    except ModuleNotFoundError:\n"
        "        ok[m] = False\n"
        "print(json.dumps(ok))\n"
    )
    import json

    return json.loads(run(python, "-c", probe, *modules, cwd=python.parent))


def test_sci_etl_search_wheel_installs_alone(wheels: dict[str, Path], tmp_path: Path) -> None:
    python = next(fresh_venv(tmp_path, wheels, "sci-etl-search"))
    found = imports(python, ["sci_etl_core.search", "sci_etl_core.exceptions", "numpy"])
    assert found == {"sci_etl_core.search": True, "sci_etl_core.exceptions": True, "numpy": False}
    run(python, "-c", "from sci_etl_core.search import parse_query; parse_query('a OR b')")


def test_klea_retrieval_alone_has_no_ingestion_modules(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    python = next(fresh_venv(tmp_path, wheels, "klea-retrieval"))
    found = imports(python, RETRIEVAL_MODULES + INGEST_MODULES)
    assert all(found[m] for m in RETRIEVAL_MODULES), found
    assert not any(found[m] for m in INGEST_MODULES), found


def test_klea_ingest_brings_both_halves_of_the_namespace(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    python = next(fresh_venv(tmp_path, wheels, "klea-ingest"))
    found = imports(python, RETRIEVAL_MODULES + INGEST_MODULES)
    assert all(found.values()), found


def test_uninstalling_klea_ingest_leaves_klea_retrieval_importable_and_typed(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    python = next(fresh_venv(tmp_path, wheels, "klea-ingest"))
    run("uv", "pip", "uninstall", "--quiet", "--python", python, "klea-ingest")
    found = imports(python, RETRIEVAL_MODULES + INGEST_MODULES)
    assert all(found[m] for m in RETRIEVAL_MODULES), found
    assert not any(found[m] for m in INGEST_MODULES), found
    where = (
        "import klea_utils.stores.metadata as m, pathlib; print(pathlib.Path(m.__file__).parent)"
    )
    stores = Path(run(python, "-c", where, cwd=tmp_path).strip())
    assert (stores / "py.typed").is_file()
    # A type checker reads the installed package's annotations (with no marker it would
    # refuse the import as untyped): a wrong assignment is reported, nothing else.
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from klea_utils.stores.metadata import is_dropped_key\n"
        'wrong: str = is_dropped_key("title")\n',
        encoding="utf-8",
    )
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\n", encoding="utf-8")
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            config,
            "--python-executable",
            python,
            "--no-incremental",
            probe,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert 'expression has type "bool", variable has type "str"' in checked.stdout, checked.stdout
    assert "py.typed" not in checked.stdout
    assert checked.stdout.count("error:") == 1, checked.stdout
