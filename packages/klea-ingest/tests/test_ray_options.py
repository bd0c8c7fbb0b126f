"""The Ray options are checked before anything runs, and the local path never imports Ray."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
from klea_utils.stores.cli import app
from klea_utils.stores.ingestion import StoresBuilder
from typer.testing import CliRunner

MODEL = "huggingface:all-MiniLM-L6-v2"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ray_address": " "}, "ray_address must be"),
        ({"ray_embed": True}, "ray_embed=True needs ray_address"),
    ],
)
def test_bad_ray_options_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        StoresBuilder(MODEL, logging.getLogger("t"), **kwargs)  # type: ignore[arg-type]


def test_ray_embed_without_ray_is_a_usage_error(tmp_path: Path) -> None:
    args = ["build", str(tmp_path), "--store", f"chroma:{tmp_path / 's'}", "--collection", "c"]
    result = CliRunner().invoke(app, [*args, "--ray-embed"], env={"COLUMNS": "300"})
    assert result.exit_code == 2
    assert "give --ray ADDRESS too" in result.output


def test_the_local_path_does_not_import_ray(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title\n\nSome text about cells.\n", encoding="utf-8")
    code = (
        "import logging, sys\n"
        "from pathlib import Path\n"
        "from klea_utils.stores.ingestion import StoresBuilder\n"
        "b = StoresBuilder('huggingface:all-MiniLM-L6-v2', logging.getLogger('t'), max_tokens=64)\n"
        f"assert b.chunk_all(Path({str(tmp_path)!r}), in_process=True)\n"
        "assert 'ray' not in sys.modules, 'the local path imported ray'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
