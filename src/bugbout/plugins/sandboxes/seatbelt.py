"""The ``seatbelt`` sandbox: macOS ``sandbox-exec`` with a profile built per confinement.

The profile allows by default and denies what a confinement forbids; seatbelt applies
the last rule that matches, so rules are written from the general to the specific:

- reads: masked paths are unreadable (their names stay visible in listings), readable
  and writable paths inside them readable again, and their ancestors' metadata readable
  (so that ``realpath`` and ``getcwd`` work);
- writes: denied everywhere but in the writable paths, the working directory, the
  temporary directories (shared with the machine: seatbelt cannot give a private one)
  and a few devices; denied again in masked and readable paths inside those, and
  their ancestors cannot be renamed or deleted (which would move them out of their
  rule);
- unix sockets: only inside the writable paths (not the machine's ssh-agent, docker
  or other daemons), never inside masked ones;
- network: denied unless the confinement keeps it; then only the system resolver's
  socket is added;
- other processes: signals and process information only within the sandbox (no
  reading other agents' environments), no Apple Events (which could make another
  application run a command outside the sandbox).

Limits: seatbelt matches paths, so a hard link made before the run to a masked file
from a readable place stays readable; Mach services are not restricted, so a system
daemon can still act on the process's behalf.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from bugbout.sandboxes import (
    Access,
    Confinement,
    Layer,
    Options,
    PluginError,
    SandboxPlugin,
    hookimpl,
    inside,
    layers,
    resolve,
)

PROBE_TIMEOUT = 30.0
NO_SANDBOX = "or set sandbox=none to run agents unconfined"
DEVICES = (
    '(literal "/dev/null")',
    '(literal "/dev/zero")',
    '(literal "/dev/tty")',
    '(literal "/dev/ptmx")',
    '(literal "/dev/dtracehelper")',
    '(regex #"^/dev/fd/[0-9]+$")',
    '(regex #"^/dev/ttys[0-9]+$")',
)
"""Devices every process writes to: the null device, its terminal, its descriptors."""
RESOLVER_SOCKET = "/private/var/run/mDNSResponder"


class SeatbeltOptions(Options):
    """Options of the ``seatbelt`` sandbox."""

    executable: str = "/usr/bin/sandbox-exec"
    """sandbox-exec, by absolute path (not looked up on a PATH a caller controls)."""
    temp_dirs: tuple[str, ...] = ("/private/tmp", "/private/var/tmp", "/private/var/folders")
    """Temporary directories that stay writable (``/private/var/folders`` holds each user's
    ``TMPDIR``)."""


def quote(text: str) -> str:
    """``text`` as a seatbelt (Scheme) string literal."""
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in text):
        raise PluginError(f"seatbelt cannot name the path {text!r}: it holds a control character")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _subpaths(paths: Sequence[Path]) -> str:
    return " ".join(f"(subpath {quote(str(path))})" for path in paths)


def _sockets(end: str, paths: Sequence[Path]) -> str:
    return " ".join(f"({end} unix-socket (subpath {quote(str(path))}))" for path in paths)


def profile(confinement: Confinement, temp_dirs: Sequence[str | Path] = ()) -> str:
    """The seatbelt profile that enforces ``confinement``, as text."""
    stack = layers(confinement)
    masked = [layer.path for layer in stack if layer.access is Access.MASKED]
    rules = ["(version 1)", "(allow default)"]

    rules.append(";; reads: masked paths hidden, what is exposed inside them readable again")
    ancestors: set[Path] = set()
    for layer in stack:
        if layer.access is Access.MASKED:
            rules.append(f"(deny file-read* {_subpaths([layer.path])})")
        elif inside(layer.path, masked):
            rules.append(f"(allow file-read* {_subpaths([layer.path])})")
            ancestors.update(parent for parent in layer.path.parents if inside(parent, masked))
    if ancestors:
        literals = " ".join(f"(literal {quote(str(path))})" for path in sorted(ancestors))
        rules.append(f"(allow file-read-metadata {literals})")

    rules.append(";; writes: only in the writable paths, the temporary directories, devices")
    temporary = [Layer(resolve(Path(entry)), Access.WRITABLE) for entry in temp_dirs]
    writes = sorted(
        [*stack, *(t for t in temporary if t.path not in {layer.path for layer in stack})],
        key=lambda layer: (len(layer.path.parts), str(layer.path)),
    )
    rules += ["(deny file-write*)", f"(allow file-write* {' '.join(DEVICES)})"]
    writable: list[Path] = []
    pinned: set[Path] = set()
    for layer in writes:
        if layer.access is Access.WRITABLE:
            rules.append(f"(allow file-write* {_subpaths([layer.path])})")
            writable.append(layer.path)
        elif inside(layer.path, writable):
            rules.append(f"(deny file-write* {_subpaths([layer.path])})")
            # Renaming it, or a directory above it, would move it out of its rule.
            pinned.update(
                path for path in (layer.path, *layer.path.parents) if inside(path.parent, writable)
            )
    if pinned:
        literals = " ".join(f"(literal {quote(str(path))})" for path in sorted(pinned))
        rules.append(f"(deny file-write-unlink {literals})")

    rules.append(";; sockets and network")
    if not confinement.network:
        rules.append("(deny network*)")
    else:
        rules.append("(deny network-outbound (remote unix-socket))")
        rules.append(f'(allow network-outbound (literal "{RESOLVER_SOCKET}"))')
    own = [layer.path for layer in stack if layer.access is Access.WRITABLE]
    closed = [
        layer.path
        for layer in stack
        if layer.access is not Access.WRITABLE and inside(layer.path, own)
    ]
    for verb, paths in (("allow", own), ("deny", closed)):
        if paths:
            rules.append(f"({verb} network-bind network-inbound {_sockets('local', paths)})")
            rules.append(f"({verb} network-outbound {_sockets('remote', paths)})")

    rules.append(";; other processes")
    rules += [
        "(deny signal)",
        "(allow signal (target same-sandbox))",
        "(deny process-info*)",
        "(allow process-info* (target same-sandbox))",
        "(deny appleevent-send)",
    ]
    return "\n".join(rules) + "\n"


class Seatbelt:
    """Wraps commands in ``sandbox-exec -p <profile>``."""

    name = "seatbelt"

    def __init__(self, options: SeatbeltOptions | None = None) -> None:
        self.options = options or SeatbeltOptions()
        self._lock = threading.Lock()
        self._probed = False
        self._problem: str | None = None

    def profile(self, confinement: Confinement) -> str:
        return profile(confinement, self.options.temp_dirs)

    def wrap(self, argv: list[str], confinement: Confinement) -> list[str]:
        """``argv`` run by sandbox-exec under ``confinement``.

        sandbox-exec does not change directory: the caller starts it in the working
        directory, as it would start the command itself.
        """
        return [self.options.executable, "-p", self.profile(confinement), *argv]

    def problem(self) -> str | None:
        """``None`` if sandbox-exec accepts bugbout's profiles here (tried once)."""
        with self._lock:
            if not self._probed:
                self._problem = self._probe()
                self._probed = True
            return self._problem

    def _probe(self) -> str | None:
        if not _on_macos():
            return (
                "seatbelt needs macOS (sandbox-exec); on Linux use sandbox=bubblewrap, "
                f"{NO_SANDBOX}"
            )
        executable = Path(self.options.executable)
        if not executable.is_file():
            return (
                f"sandbox-exec is missing ({executable} does not exist; it ships with macOS): "
                f"set the seatbelt option executable to where it is, {NO_SANDBOX}"
            )
        try:
            with tempfile.TemporaryDirectory() as scratch:
                result = subprocess.run(
                    self.wrap(["/usr/bin/true"], Confinement(workdir=Path(scratch))),
                    capture_output=True,
                    text=True,
                    timeout=PROBE_TIMEOUT,
                    check=False,
                    stdin=subprocess.DEVNULL,
                )
        except (OSError, subprocess.SubprocessError) as exc:
            return f"sandbox-exec ({executable}) cannot run: {exc}; {NO_SANDBOX}"
        if result.returncode == 0:
            return None
        lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit status {result.returncode}"
        return f"sandbox-exec refuses bugbout's profile ({reason}); {NO_SANDBOX}"


def _on_macos() -> bool:
    return sys.platform == "darwin"


@hookimpl
def bugbout_sandboxes() -> Iterator[SandboxPlugin]:
    yield SandboxPlugin(
        name=Seatbelt.name,
        factory=Seatbelt,
        options=SeatbeltOptions,
        description=(
            "macOS sandbox-exec: masked paths unreadable, writes only in the checkout, "
            "logs and temporary directories, no network"
        ),
    )
