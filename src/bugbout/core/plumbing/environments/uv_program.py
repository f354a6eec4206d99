"""The ``uv`` program, as the ``uv`` and ``podman`` environments run it: where it is, what
it supports, one call of it, and its error output as one line."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from bugbout.core.contract.errors import EnvironmentFailure

HELP_TIMEOUT = 120.0
"""Seconds uv may take to print its help."""
_CROSS = "\u00d7"  # how uv marks errors and causes on a terminal
_ARROW = "\u2570\u2500\u25b6"


class UvFailure(EnvironmentFailure):
    """uv failed; ``reason`` is its error as one line, without the command."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def run_uv(args: list[str], *, timeout: float, what: str, cwd: Path) -> str:
    """Run uv in ``cwd``, in a process group of its own that a stopped bout kills (with
    the builds uv started); its output, or an EnvironmentFailure naming the cause and the
    command (a :class:`UvFailure` when uv ran)."""
    import shlex
    import subprocess

    from bugbout.core.plumbing.confinement.process import kill_group
    from bugbout.core.plumbing.runtime.stopping import watch

    argv = [uv_binary(), *args]
    shown = shlex.join(["uv", *args])
    env = {
        **os.environ,
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_CONFIG": "1",
        "UV_NO_PROGRESS": "1",
    }
    env.pop("VIRTUAL_ENV", None)
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        raise EnvironmentFailure(f"{what} failed: cannot run uv: {exc}") from None
    watch(process)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process)
        process.communicate()
        reason = f"timed out after {timeout:.0f} s"
        raise UvFailure(f"{what} {reason} (command: {shown})", reason) from None
    if process.returncode != 0:
        reason = uv_error(stderr.decode(errors="replace"))
        raise UvFailure(f"{what} failed: {reason} (command: {shown})", reason)
    return stdout.decode(errors="replace")


def uv_error(stderr: str) -> str:
    """The meaningful part of uv's error output, as one line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("error:", _CROSS))]
    causes = [line for line in lines if line.startswith(("cause:", _ARROW, "Caused by:"))]
    parts = [*errors[:1], *causes[-1:]] or [
        line for line in lines if line.strip("^~ ") and not line.startswith("Using ")
    ][-1:]
    return ": ".join(_clean(part) for part in parts) or "no error output"


def _clean(line: str) -> str:
    for prefix in ("error:", "cause:", "Caused by:"):
        if line.startswith(prefix):
            line = line[len(prefix) :]
    return line.lstrip(f"{_CROSS}{_ARROW}\u2502\u251c ").strip().rstrip(":")


@functools.cache
def supports_exclude_newer_package() -> bool:
    """Whether the installed uv can lift the date cap for single packages."""
    import subprocess

    try:
        help_text = subprocess.run(
            [uv_binary(), "pip", "install", "--help"],
            capture_output=True,
            text=True,
            timeout=HELP_TIMEOUT,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "--exclude-newer-package" in help_text


def uv_binary() -> str:
    """The uv program: the one the ``uv`` package ships, else the one on ``PATH``."""
    try:
        import uv

        return str(uv.find_uv_bin())
    except (ImportError, FileNotFoundError):
        import shutil

        found = shutil.which("uv")
        if not found:
            raise EnvironmentFailure("uv is not installed; `pip install uv`") from None
        return found
