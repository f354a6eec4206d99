"""The ``podman`` sandbox: each confined process runs in its own podman container.

The container mirrors this machine read-only (every top-level entry bind-mounted, no
image needed) with the confinement layered on top as bubblewrap does it: masked
directories are empty read-only tmpfs, masked files ``/dev/null``, readable paths
read-only binds, the working directory and the writable paths read-write binds at the
same paths, the most specific path last. ``/tmp``, ``/var/tmp`` and ``/run`` are
private; the process has no capabilities (``--cap-drop all``, ``no-new-privileges``),
its own pid, ipc and uts namespaces, and ``--network none`` unless the confinement
keeps the network. Its environment is exactly the one it was started with, passed by
name. An agent that must reach its model does so through bugbout's egress forwarder,
whose socket folder the race adds to the readable paths.

Containers are labelled ``io.bugbout=sandbox``, removed by ``podman run --rm`` when the
process ends, and removed by a watcher when the run is killed (a timeout); see
:mod:`bugbout.sandbox.podman_run`. Podman runs with bugbout's own configuration and
storage (:class:`bugbout.sandbox.podman.Podman`): runc, cgroupfs and ulimits within the
caller's hard limits, so that it works on cgroup v1 hosts without ``CAP_SYS_RESOURCE``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from bugbout import SandboxPlugin, hookimpl
from bugbout.core.errors import PluginError
from bugbout.plugins.sandboxes import Access, layers, resolve
from bugbout.sandbox import podman_run
from bugbout.sandbox.confinement import Confinement
from bugbout.sandbox.podman import INSTALL, Podman, explain

PROBE_TIMEOUT = 120.0
OWN_TOP_LEVEL = ("proc", "sys", "dev", "tmp", "run")
"""Top-level directories the container has its own of (not bound from the host)."""
SKIPPED_TOP_LEVEL = ("lost+found",)
INIT_PATHS = (
    "/usr/libexec/podman/catatonit",
    "/usr/libexec/catatonit/catatonit",
    "/usr/local/libexec/podman/catatonit",
    "/usr/bin/catatonit",
)
"""Where podman's init (catatonit) is found: it reaps orphans and forwards signals."""
OTHER_SANDBOX = "or choose another sandbox (sandbox=bubblewrap)"
UNMOUNTABLE = (",", "\n")
"""Characters podman's ``--mount`` cannot carry in a path."""
_ACCESS = {
    Access.MASKED: podman_run.MASKED,
    Access.READABLE: podman_run.READABLE,
    Access.WRITABLE: podman_run.WRITABLE,
}


class PodmanSandboxOptions(BaseModel):
    """Options of the ``podman`` sandbox."""

    model_config = ConfigDict(
        extra="forbid", alias_generator=lambda n: n.replace("_", "-"), populate_by_name=True
    )

    executable: str = "podman"
    """The podman program: a name looked up on ``PATH`` or a path."""
    storage: str | None = None
    """Where bugbout's podman keeps its containers (default ``BUGBOUT_HOME/podman``)."""
    init: bool = True
    """Run podman's init (catatonit) as the container's pid 1 when it is installed."""


class PodmanSandbox:
    """Wraps commands in ``podman run``; see the module documentation."""

    name = "podman"
    overlays = False
    """podman runs in no namespace of bugbout's: its agents get copied working copies."""

    def __init__(self, options: PodmanSandboxOptions | None = None) -> None:
        self.options = options or PodmanSandboxOptions()
        from bugbout.core.tasks import bugbout_home

        storage = Path(self.options.storage).expanduser() if self.options.storage else None
        found = shutil.which(self.options.executable)
        self.executable = str(Path(found).absolute()) if found else None
        self.podman = Podman(
            bugbout_home(), storage=storage, executable=self.executable or "podman"
        )
        self._lock = threading.Lock()
        self._probed = False
        self._problem: str | None = None
        self._rootfs: Path | None = None

    def problem(self) -> str | None:
        """``None`` if podman runs a sandbox container here (tried once), else why not
        and the fix, in one line."""
        with self._lock:
            if not self._probed:
                self._problem = self._probe()
                self._probed = True
            return self._problem

    def wrap(self, argv: list[str], confinement: Confinement) -> list[str]:
        """``argv`` run in a container under ``confinement``, in its working directory."""
        workdir = resolve(confinement.workdir)
        if not workdir.is_dir():
            raise PluginError(f"cannot confine a process to {workdir}: it is not a directory")
        if self.executable is None:
            raise PluginError(self._not_installed())
        rootfs, top_level = self._skeleton()
        access = {path: podman_run.READABLE for path in top_level}
        for layer in layers(confinement):
            access[layer.path] = _ACCESS[layer.access]
        for path in access:
            if any(character in str(path) for character in UNMOUNTABLE):
                raise PluginError(
                    f"podman cannot mount {str(path)!r} (it contains a comma or a newline): "
                    f"rename it, {OTHER_SANDBOX}"
                )
        ordered = sorted(access, key=lambda path: (len(path.parts), str(path)))
        init = next((p for p in INIT_PATHS if os.access(p, os.X_OK)), None)
        spec = podman_run.Spec(
            podman=self.executable,
            config=self.podman.environ(),
            rootfs=str(rootfs),
            workdir=str(workdir),
            layers=[(str(path), access[path]) for path in ordered],
            argv=list(argv),
            network=confinement.network,
            init=init if self.options.init else None,
        )
        return podman_run.runner_argv(spec)

    def _skeleton(self) -> tuple[Path, list[Path]]:
        """The container's root (an empty stand-in for each top-level entry of this
        machine, made once per layout) and the top-level entries to bind into it."""
        entries: list[tuple[str, str, str]] = []
        for entry in sorted(os.scandir("/"), key=lambda e: e.name):
            if entry.name in SKIPPED_TOP_LEVEL:
                continue
            if entry.is_symlink():
                entries.append((entry.name, "link", str(Path(entry.path).readlink())))
            elif entry.is_dir():
                entries.append((entry.name, "dir", ""))
            elif entry.is_file():
                entries.append((entry.name, "file", ""))
        for name in OWN_TOP_LEVEL:
            if (name, "dir", "") not in entries:
                entries.append((name, "dir", ""))
        key = hashlib.sha256(repr(sorted(entries)).encode()).hexdigest()[:16]
        rootfs = self.podman.config_dir / f"sandbox-root-{key}"
        if not rootfs.is_dir():
            self.podman.config_dir.mkdir(parents=True, exist_ok=True)
            partial = Path(tempfile.mkdtemp(prefix=".sandbox-root-", dir=self.podman.config_dir))
            for name, kind, target in entries:
                if kind == "link":
                    (partial / name).symlink_to(target)
                elif kind == "dir":
                    (partial / name).mkdir()
                else:
                    (partial / name).touch()
            partial.chmod(0o755)
            try:
                partial.rename(rootfs)
            except OSError:  # made meanwhile by another process
                shutil.rmtree(partial, ignore_errors=True)
        top_level = [
            Path("/", name)
            for name, kind, _ in entries
            if kind != "link" and name not in OWN_TOP_LEVEL
        ]
        return rootfs, top_level

    def _not_installed(self) -> str:
        return (
            f"podman is not installed ({self.options.executable} is not on PATH): "
            f"{INSTALL}, {OTHER_SANDBOX}"
        )

    def _probe(self) -> str | None:
        if not sys.platform.startswith("linux"):
            return (
                "the podman sandbox needs Linux (elsewhere podman runs containers in a "
                "virtual machine that does not share this machine's files); choose another "
                "sandbox (sandbox=seatbelt on macOS)"
            )
        if self.executable is None:
            return self._not_installed()
        with tempfile.TemporaryDirectory(prefix="bugbout-podman-probe-") as scratch:
            try:
                argv = self.wrap(["/bin/sh", "-c", "exit 0"], Confinement(workdir=Path(scratch)))
                result = subprocess.run(
                    argv,
                    cwd=scratch,
                    env={"PATH": os.environ.get("PATH", os.defpath)},
                    capture_output=True,
                    text=True,
                    timeout=PROBE_TIMEOUT,
                    check=False,
                    stdin=subprocess.DEVNULL,
                )
            except subprocess.TimeoutExpired:
                return (
                    f"podman did not run a sandbox container within {PROBE_TIMEOUT:.0f} s; "
                    f"run `bugbout doctor`, {OTHER_SANDBOX}"
                )
            except (OSError, PluginError) as exc:
                return f"the podman sandbox cannot start: {exc}; {OTHER_SANDBOX}"
        if result.returncode == 0:
            return None
        return f"{explain(result.stderr, self.podman.config_dir)}; {OTHER_SANDBOX}"


@hookimpl
def bugbout_sandboxes() -> Iterator[SandboxPlugin]:
    yield SandboxPlugin(
        name="podman",
        factory=PodmanSandbox,
        options=PodmanSandboxOptions,
        description=(
            "a podman container per process: the machine read-only, masked paths hidden, "
            "private /tmp, no network"
        ),
    )
