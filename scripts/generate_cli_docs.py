"""Write docs/reference/cli.md from the commands' own ``--help`` output.

Run ``uv run --frozen python scripts/generate_cli_docs.py`` after changing a command;
``--check`` exits 1 when the committed page differs from what the commands print, and a
test runs that check so the reference cannot drift from the command definitions.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "cli.md"
COMMANDS = {
    "sci-etl-search": "Boolean, semantic and hybrid search over an FTS5 index (sci-etl-search).",
    "klea-retrieve": "Run every configured store for a question and print references "
    "(klea-retrieval).",
    "klea-stores-create": "Build vector, BM25 and FTS5 stores from a folder of documents "
    "(klea-ingest).",
    "klea-serve": "Keep the stores loaded and serve them over MCP, a JSON API and a search "
    "page (klea-retrieval[serve]).",
}
ANSI = re.compile(r"\x1b\[[0-9;]*m")
SUBCOMMAND = re.compile(r"^(?:[│|]\s+|\s{2})([a-z][a-z0-9-]*)(?:\s{2,}|$)", re.MULTILINE)


def help_text(argv: list[str]) -> str:
    env = {
        **os.environ,
        "COLUMNS": "120",
        "NO_COLOR": "1",
        "TERM": "dumb",
        "_TYPER_FORCE_DISABLE_TERMINAL": "1",
    }
    executable = shutil.which(argv[0])
    if executable is None:
        raise SystemExit(f"{argv[0]} is not installed; run uv sync first")
    result = subprocess.run(
        [executable, *argv[1:], "--help"], capture_output=True, text=True, env=env, check=True
    )
    lines = ANSI.sub("", result.stdout).splitlines()
    return "\n".join(line.rstrip() for line in lines).strip("\n") + "\n"


def subcommands(text: str) -> list[str]:
    if "Commands" not in text:
        return []
    section = text.split("Commands", 1)[1]
    return SUBCOMMAND.findall(section.split("\n\n", 1)[0] if "─" not in section else section)


def render_subcommands(argv: list[str], text: str) -> list[str]:
    parts: list[str] = []
    for sub in subcommands(text):
        sub_help = help_text([*argv, sub])
        heading = "#" * min(len(argv) + 2, 4)
        parts += [
            f"{heading} `{' '.join([*argv, sub])}`",
            "",
            "```text",
            sub_help.rstrip(),
            "```",
            "",
        ]
        parts += render_subcommands([*argv, sub], sub_help)
    return parts


def render() -> str:
    parts = [
        "# Command-line reference",
        "",
        "Generated from each command's `--help` by `scripts/generate_cli_docs.py`; do not edit.",
        "",
    ]
    for command, summary in COMMANDS.items():
        top = help_text([command])
        parts += [f"## `{command}`", "", summary, "", "```text", top.rstrip(), "```", ""]
        parts += render_subcommands([command], top)
    return "\n".join(parts)


def main() -> int:
    page = render()
    if "--check" in sys.argv[1:]:
        if not PAGE.exists() or PAGE.read_text(encoding="utf-8") != page:
            print(
                f"{PAGE.relative_to(ROOT)} is stale: run scripts/generate_cli_docs.py",
                file=sys.stderr,
            )
            return 1
        return 0
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(page, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
