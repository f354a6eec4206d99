"""Overlay working copies: a kernel overlay of a read-only tree, mounted in a private
namespace, so that everything written lands in a plain upper directory.

An overlay mount needs ``CAP_SYS_ADMIN``. An unprivileged process has it in a user
namespace of its own (Linux 5.11 and later mount overlays there, with ``userxattr``), so
:func:`enter` prefixes a command with ``unshare --user --map-root-user --mount``, mounts
the overlay at its target, then runs the command in a nested user namespace that maps
the caller's own uid and gid back (a program sees the user it runs as, not root). Root
needs no user namespace: it mounts in a private mount namespace, and hands the upper
directory to the user confined processes run as (:mod:`bugbout.sandbox.identity`). The
mount lives as long as that namespace: only the command and what it starts see it, and
outside the upper directory holds exactly what they wrote, read as a plain directory.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from bugbout.sandbox.identity import hand_over

PROBE_TIMEOUT = 10.0
UNMOUNTABLE = (",", ":", "\\", "\n")
"""Characters the overlay's mount options cannot carry in a path."""
MOUNT_OPTIONS = "userxattr,redirect_dir=nofollow,metacopy=off"
"""Options every overlay is mounted with: its private attributes in the ``user.``
namespace (what an unprivileged mount requires), no redirects and no metadata-only
copies: a renamed directory is copied whole and every changed file holds its data, so
the upper directory reads on its own."""


class Overlay(BaseModel):
    """One overlay: ``lower`` (read-only) under ``upper`` (every write), mounted at
    ``target``; ``work`` is the overlay's scratch directory, on the filesystem of
    ``upper``. Paths are absolute."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lower: Path
    upper: Path
    work: Path
    target: Path

    def options(self) -> str:
        """The mount options naming the overlay's directories."""
        for path in (self.lower, self.upper, self.work):
            if any(char in str(path) for char in UNMOUNTABLE):
                raise ValueError(f"cannot mount an overlay of {path}: its path holds one of ,:\\")
        return f"lowerdir={self.lower},upperdir={self.upper},workdir={self.work},{MOUNT_OPTIONS}"


_MOUNT_THEN_RUN = (
    'mount -t overlay overlay -o "$1" -- "$2" && cd -- "$2" || exit 125; shift 2; '
    'exec "$@"'
)  # fmt: skip
"""The shell run in the new namespaces: mount, enter the mount (a working directory
below its mount point would still be the directory under it), then become the command
(one process)."""
_MOUNT_THEN_EVAL = (
    'mount -t overlay overlay -o "$1" -- "$2" && cd -- "$2" || exit 125; shift 2; '
    'eval "shift; $1"'
)  # fmt: skip
""":data:`_MOUNT_THEN_RUN` for a command that is a script of this same shell
(``sh -c SCRIPT NAME ARGS...``): the script runs in it, named as the command names it,
with the command's arguments, where starting the shell again would cost a process."""


def enter(overlay: Overlay, argv: list[str]) -> list[str]:
    """``argv`` run where ``overlay`` is mounted at its target, as the calling user."""
    tools = _tools()
    if tools is None:
        raise OSError("unshare, mount or sh is not on PATH")
    unshare, mount_shell = tools
    if os.geteuid() == 0:
        # Root mounts in a mount namespace alone: a user namespace would map only uid 0,
        # and the confined user the sandbox becomes must exist where it runs.
        hand_over(overlay.upper)
        private = [unshare, "--mount", "--propagation", "private", "--"]
        nested: list[str] = []
    else:
        private = [
            unshare, "--user", "--map-root-user", "--mount", "--propagation", "private", "--",
        ]  # fmt: skip
        nested = [
            unshare, "--user", f"--map-user={os.getuid()}", f"--map-group={os.getgid()}", "--",
        ]  # fmt: skip
    if not nested and _script_of(argv, mount_shell):
        return [
            *private, mount_shell, "-c", _MOUNT_THEN_EVAL, argv[3], overlay.options(),
            str(overlay.target), argv[2], *argv[4:],
        ]  # fmt: skip
    return [
        *private, mount_shell, "-c", _MOUNT_THEN_RUN, "sh", overlay.options(),
        str(overlay.target), *nested, *argv,
    ]  # fmt: skip


def _script_of(argv: list[str], shell: str) -> bool:
    """Whether ``argv`` runs a script, named, in ``shell`` itself (``/bin/sh -c SCRIPT
    NAME ARGS...``, the program given by its path)."""
    return (
        len(argv) >= 4
        and argv[1] == "-c"
        and Path(argv[0]).is_absolute()
        and _program(argv[0]) == _program(shell)
    )


@functools.cache
def _program(path: str) -> str:
    """The file a program's path leads to (looked up once per process)."""
    return os.path.realpath(path)


@functools.cache
def _tools() -> tuple[str, str] | None:
    """``unshare`` and ``sh`` (found once per process), when ``mount`` is there too."""
    unshare, shell = shutil.which("unshare"), shutil.which("sh")
    if unshare is None or shell is None or shutil.which("mount") is None:
        return None
    return unshare, shell


@functools.cache
def overlay_problem(scratch: Path) -> str | None:
    """``None`` when an overlay mounts in a private namespace on this machine, with its
    upper directory under ``scratch`` (tried once per folder), else why not."""
    if _tools() is None:
        return "unshare, mount or sh is not on PATH (util-linux)"
    scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".overlay-probe-", dir=scratch) as folder:
        root = Path(folder)
        overlay = Overlay(
            lower=root / "lower", upper=root / "upper", work=root / "work", target=root / "mnt"
        )
        for directory in (overlay.lower, overlay.upper, overlay.work, overlay.target):
            directory.mkdir()
        (overlay.lower / "gone").write_text("")
        try:
            result = subprocess.run(
                enter(overlay, ["rm", "--", str(overlay.target / "gone")]),
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
            return f"cannot try an overlay: {exc}"
        if result.returncode:
            lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
            return lines[-1] if lines else f"exit status {result.returncode}"
        if not is_whiteout(overlay.upper / "gone"):
            return "the overlay left no whiteout for a deleted file"
    return None


def is_whiteout(path: Path | str) -> bool:
    """Whether ``path`` is an overlay whiteout (a character device 0/0): a deleted file."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == 0
