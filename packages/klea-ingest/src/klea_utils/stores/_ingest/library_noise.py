"""Keep libraries' warnings off the terminal: they go to the log, shown at ``-v``.

Docling's document model warns once per odd page box (``UserWarning: Provenance bbox
coordinate t on page 1 is outside page bounds ...; clamping``), pypdf logs a WARNING for
every damaged object it works around; a run over a real folder printed hundreds of such
lines, raw, between the progress lines. None of them is something a user can act on: the
library already did the right thing. :func:`route_library_noise` sends Python warnings
(``warnings.warn``) and the WARNING lines of the loggers in :data:`DEMOTED_LOGGERS` to the
log at INFO, under the logger :data:`WARNINGS_LOGGER`, so ``-v`` shows them and the
default run does not. It is called by the CLI's logging set-up and by every conversion
worker, whose log records are forwarded to the parent.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any, TextIO

__all__ = ["DEMOTED_LOGGERS", "WARNINGS_LOGGER", "route_library_noise"]

WARNINGS_LOGGER = "klea_utils.stores.library_warnings"
"""The logger that receives Python warnings, at INFO."""

DEMOTED_LOGGERS = ("pypdf",)
"""Libraries whose WARNING log lines are shown only at ``-v`` (as INFO)."""


def _log_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """``warnings.showwarning`` replacement: one INFO record instead of two stderr lines."""
    logging.getLogger(WARNINGS_LOGGER).info(
        "%s: %s (%s:%d)", category.__name__, message, filename, lineno
    )


class _ToInfo(logging.Filter):
    """Turns a library's WARNING records into INFO ones, dropped unless INFO is shown."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.WARNING:
            if not logging.getLogger(WARNINGS_LOGGER).isEnabledFor(logging.INFO):
                return False
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


_FILTER = _ToInfo()


def route_library_noise() -> None:
    """Send warnings and the demoted loggers' WARNINGs to the log at INFO (idempotent)."""
    showwarning: Any = _log_warning
    warnings.showwarning = showwarning
    for name in DEMOTED_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
