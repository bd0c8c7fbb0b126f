"""Render PDF pages in a child process, so that text extraction never follows a render.

pdfium keeps font state for the whole process: rendering a page whose glyphs are drawn
with a substituted (not embedded) font changes the tight character boxes that text
extraction later reads from another PDF, or from later pages of the same one. A build
whose worker OCRed one file and then read the next gave chunks that depended on the order
files were dealt in. So every page image (:mod:`klea_utils.stores._ingest.pdf.ocr`) is
rendered by a long-lived child process
(:mod:`klea_utils.stores._ingest.pdf.render_process`), one per process that asks,
started on the first render and closed with that process (:func:`close_page_renderer`,
also at exit).

A child that dies or hangs (:data:`RENDER_TIMEOUT_S`) on a page is a
:class:`~klea_utils.stores.ingest_exceptions.ConversionError` that names the file and the
page; the next render starts a fresh child.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from klea_utils.stores.ingest_exceptions import ConversionError

__all__ = ["RENDER_TIMEOUT_S", "PageRenderer", "close_page_renderer", "render_page"]

RENDER_TIMEOUT_S = 120.0
"""The longest one page may take to render (a 300-dpi page takes well under a second)."""

_READ_SIZE = 1 << 20


_BOOT = (
    "import importlib.util, sys\n"
    "spec = importlib.util.spec_from_file_location('klea_render_process', sys.argv[1])\n"
    "module = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(module)\n"
    "module.main()\n"
)
"""The child's program: run :mod:`~klea_utils.stores._ingest.pdf.render_process` from the
very file this process imported (the same code, wherever it was imported from), with
``-P``: neither the working directory (a papers folder, say) nor any other folder is put
ahead of the standard library on its import path."""


def _command() -> list[str]:
    from klea_utils.stores._ingest.pdf import render_process

    return [sys.executable, "-P", "-c", _BOOT, str(Path(render_process.__file__).resolve())]


class _Replies:
    """Timed reads of the child's stdout (a pipe), through a buffer."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()

    def _fill(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self._fd], [], [], left)[0]:
            raise TimeoutError
        data = os.read(self._fd, _READ_SIZE)
        if not data:  # the child's stdout ended: it exited or was killed
            raise EOFError
        self._buffer += data

    def line(self, deadline: float) -> bytes:
        while (end := self._buffer.find(b"\n")) < 0:
            self._fill(deadline)
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return line

    def exactly(self, size: int, deadline: float) -> bytes:
        while len(self._buffer) < size:
            self._fill(deadline)
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data


class PageRenderer:
    """A child process that renders pages on request; started on the first :meth:`render`.

    Args:
        timeout_s: The longest one page may take before the child is killed.
    """

    def __init__(self, timeout_s: float = RENDER_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self._process: subprocess.Popen[bytes] | None = None
        self._replies: _Replies | None = None
        self._owner = os.getpid()
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        """The child's process id, ``None`` while none runs."""
        return self._process.pid if self._process is not None else None

    def _child(self) -> tuple[subprocess.Popen[bytes], _Replies]:
        if self._process is None or self._replies is None or self._owner != os.getpid():
            self._owner = os.getpid()  # a forked copy never drives its parent's child
            self._process = subprocess.Popen(
                _command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
            assert self._process.stdout is not None
            self._replies = _Replies(self._process.stdout.fileno())
        return self._process, self._replies

    def render(self, path: Path, index: int, scale: float) -> Any:
        """Page ``index`` (0-based) of the PDF at ``path``, rendered at ``scale`` with its
        ``/Rotate`` applied, as a greyscale PIL image.

        Raises:
            ConversionError: The page cannot be rendered, or the child died or took longer
                than :attr:`timeout_s` on it.
        """
        from PIL import Image

        request = {"path": str(Path(path).resolve()), "page": index, "scale": scale}
        with self._lock:
            process, replies = self._child()
            assert process.stdin is not None
            deadline = time.monotonic() + self.timeout_s
            try:
                process.stdin.write(json.dumps(request).encode() + b"\n")
                process.stdin.flush()
                header = json.loads(replies.line(deadline))
                size = (int(header.get("width", 0)), int(header.get("height", 0)))
                pixels = replies.exactly(size[0] * size[1], deadline)
            except TimeoutError as exc:
                self._stop(kill=True)
                raise ConversionError(
                    path, f"rendering page {index + 1} took over {self.timeout_s:g} s"
                ) from exc
            except (EOFError, OSError, ValueError) as exc:
                code = self._stop()
                raise ConversionError(
                    path, f"the page renderer stopped on page {index + 1} (exit code {code})"
                ) from exc
        if "error" in header:
            raise ConversionError(
                path, f"page {index + 1} could not be rendered: {header['error']}"
            )
        return Image.frombytes("L", size, pixels)

    def _stop(self, *, kill: bool = False) -> int | None:
        """Stop the child (by closing its stdin, or killing it); its exit code."""
        process, self._process, self._replies = self._process, None, None
        if process is None:
            return None
        if kill:
            process.kill()
        if process.stdin is not None:
            with contextlib.suppress(OSError):  # a dead child's pipe
                process.stdin.close()
        try:
            code = process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
            code = process.wait()
        if process.stdout is not None:
            process.stdout.close()
        return code

    def close(self) -> None:
        """Stop the child, if one runs (a later :meth:`render` starts a fresh one)."""
        with self._lock:
            if self._owner == os.getpid():
                self._stop()


_shared: PageRenderer | None = None
_shared_lock = threading.Lock()


def render_page(path: Path, index: int, scale: float) -> Any:
    """:meth:`PageRenderer.render` on this process's renderer (started on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = PageRenderer()
            atexit.register(close_page_renderer)
        renderer = _shared
    return renderer.render(path, index, scale)


def close_page_renderer() -> None:
    """Stop this process's renderer child, if it runs."""
    with _shared_lock:
        renderer = _shared
    if renderer is not None:
        renderer.close()
