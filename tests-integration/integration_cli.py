"""The workspace's console scripts run as a user runs them, for the end-to-end tests.

Each command is the installed script of this environment (``klea-stores-create``,
``klea-retrieve``, ``klea-serve``, ``sci-etl-search``), offline (no DOI lookups, no hub),
with a wide terminal so that no line of its output is wrapped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["BIN", "ENV", "ROOT", "SAMPLE_PAPERS", "run_command"]

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_PAPERS = ROOT / "examples" / "corpus" / "papers"
BIN = Path(sys.executable).parent
ENV = {
    **os.environ,
    "KLEA_DOI_LOOKUP": "0",
    "HF_HUB_OFFLINE": "1",
    "COLUMNS": "200",
    "OMP_THREAD_LIMIT": "1",
}


def run_command(*argv: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """Run console script ``argv[0]`` with ``argv[1:]`` in ``cwd``; never raises on exit status."""
    return subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
