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
:mod:`bugbout.sandbox.podman.runner`. Podman runs with bugbout's own configuration and
storage (:class:`bugbout.sandbox.podman.Podman`): runc, cgroupfs and ulimits within the
caller's hard limits, so that it works on cgroup v1 hosts without ``CAP_SYS_RESOURCE``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from bugbout.sandboxes import (
    INSTALL,
    MOUNT_MASKED,
    MOUNT_READABLE,
    MOUNT_WRITABLE,
    Access,
    Confinement,
    Options,
    PluginError,
    Podman,
    SandboxPlugin,
    confined_owner,
    confined_view,
    explain,
    hookimpl,
    host_spec,
    layers,
    resolve,
    runner_argv,
)

PROBE_TIMEOUT = 120.0
OTHER_SANDBOX = "or choose another sandbox (sandbox=bubblewrap)"
UNMOUNTABLE = (",", "\n")
"""Characters podman's ``--mount`` cannot carry in a path."""
_ACCESS = {
    Access.MASKED: MOUNT_MASKED,
    Access.READABLE: MOUNT_READABLE,
    Access.WRITABLE: MOUNT_WRITABLE,
}


class PodmanSandboxOptions(Options):
    """Options of the ``podman`` sandbox."""

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
        from bugbout.sandboxes import bugbout_home

        storage = Path(self.options.storage).expanduser() if self.options.storage else None
        found = shutil.which(self.options.executable)
        self.executable = str(Path(found).absolute()) if found else None
        self.podman = Podman(
            bugbout_home(), storage=storage, executable=self.executable or "podman"
        )
        self._lock = threading.Lock()
        self._probed = False
        self._problem: str | None = None

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
        owner = confined_owner()
        if owner is not None:
            confinement = confined_view(confinement, owner)
        access = {layer.path: _ACCESS[layer.access] for layer in layers(confinement)}
        for path in access:
            if any(character in str(path) for character in UNMOUNTABLE):
                raise PluginError(
                    f"podman cannot mount {str(path)!r} (it contains a comma or a newline): "
                    f"rename it, {OTHER_SANDBOX}"
                )
        spec = host_spec(
            self.podman,
            self.executable,
            argv,
            workdir,
            access,
            role="sandbox",
            network=confinement.network,
            init=self.options.init,
            tmp_size=confinement.tmp_size,
            user=owner,
        )
        return runner_argv(spec)

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
        name=PodmanSandbox.name,
        factory=PodmanSandbox,
        options=PodmanSandboxOptions,
        description=(
            "a podman container per process: the machine read-only, masked paths hidden, "
            "private /tmp, no network"
        ),
    )
