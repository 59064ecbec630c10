"""Run a ``maxy`` command inside the test process, as ``python -m maxy ...`` would run it.

A command started as a process costs a second of imports and, when it searches or writes, the
load of the embedding model; most command-line tests are about what the command does, not
about the process boundary, so they run here: the same ``main()``, the argument list, the
environment replaced whole for the run, stdin, stdout and stderr captured, the exit code.
``tests/integration/test_cli_output.py`` and the stdio-server tests keep real processes.

What the process would have thrown away is put back afterwards: the environment, the cached
settings, ``--debug``, the ``maxy`` logger's level, the working directory.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def environment(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _stream(text: str = "") -> io.TextIOWrapper:
    """A text stream with a ``buffer`` under it, like a process's standard streams."""
    return io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8", newline=None, write_through=True)


def _read(stream: io.TextIOWrapper) -> str:
    stream.flush()
    raw = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return raw.decode("utf-8", errors="replace").replace("\r\n", "\n")


def maxy(
    args: Sequence[str],
    env: Mapping[str, str] | None = None,
    *,
    input: str = "",  # noqa: A002 - the name subprocess.run uses
    cwd: Path | str | None = None,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``maxy *args`` with exactly ``env`` as its environment (default: this process's),
    ``input`` on stdin; returns what ``subprocess.run(..., capture_output=True, text=True)``
    would, and raises as it would with ``check``."""
    from maxy import console
    from maxy.cli import main
    from maxy.config import get_settings

    logger = logging.getLogger("maxy")
    level = logger.level
    stdin, stdout, stderr = _stream(input), _stream(), _stream()
    argv = ["maxy", *[str(a) for a in args]]
    code: int | str | None = 0
    with (
        environment(dict(os.environ) if env is None else env),
        contextlib.chdir(cwd or REPO),
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
    ):
        saved_argv, saved_stdin = sys.argv, sys.stdin
        sys.argv, sys.stdin = argv, stdin
        get_settings.cache_clear()
        try:
            main()
        except SystemExit as exc:
            code = exc.code
        finally:
            sys.argv, sys.stdin = saved_argv, saved_stdin
            get_settings.cache_clear()
            console.set_debug(False)
            logger.setLevel(level)
    returncode = code if isinstance(code, int) else (0 if code is None else 1)
    if isinstance(code, str):
        stderr.write(code + "\n")
    done = subprocess.CompletedProcess(argv, returncode, _read(stdout), _read(stderr))
    if check:
        done.check_returncode()
    return done
