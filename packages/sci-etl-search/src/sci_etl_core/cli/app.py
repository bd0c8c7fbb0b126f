"""The ``sci-etl-search`` console script.

Typer and Rich come from the extra ``sci-etl-search[cli]``; they are imported only when
:func:`main` runs, so this module imports without them and :func:`main` can say what to
install.
"""

from __future__ import annotations

import sys

__all__ = ["INSTALL_HINT", "main"]

INSTALL_HINT = "pip install 'sci-etl-search[cli]'"
"""The command that installs what the command line needs."""


def main() -> None:
    """Run the ``sci-etl-search`` command line, exiting with its status.

    Without Typer or Rich it prints one line naming :data:`INSTALL_HINT` on standard
    error and exits with status 1.
    """
    try:
        import rich  # noqa: F401
        import typer  # noqa: F401
    except ImportError as error:
        missing = error.name or "typer"
        sys.stderr.write(
            f"sci-etl-search: the command line needs {missing!r}, which is not installed; "
            f"install it with: {INSTALL_HINT}\n"
        )
        raise SystemExit(1) from None
    from sci_etl_core.cli._app import build_app

    build_app()(prog_name="sci-etl-search")
