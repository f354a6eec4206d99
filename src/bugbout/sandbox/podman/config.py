"""bugbout's podman configuration: the two files every podman process it starts reads.

They are written under ``BUGBOUT_HOME/podman/`` (:attr:`PodmanConfig.config_dir`) and
passed through ``CONTAINERS_CONF`` and ``CONTAINERS_STORAGE_CONF``; nothing under
``/etc`` changes. The runtime is ``runc`` (crun refuses hybrid cgroup hosts), the cgroup
manager ``cgroupfs``, the default network none, and the ulimits at the caller's hard
limits (podman's default ``nofile`` of 1048576 cannot be set without
``CAP_SYS_RESOURCE``). Storage is kernel overlay in a private graph root, so bugbout's
images and containers never mix with the user's. docs/containers.md says why.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

INSTALL = "apt-get install -y podman runc conmon fuse-overlayfs uidmap slirp4netns debootstrap"
"""How to install podman and what it needs on Debian and Ubuntu."""
PROBE_TIMEOUT = 120.0
NPROC = 4096
"""Processes per container; at most the caller's hard limit."""


class PodmanError(Exception):
    """Podman could not do what was asked; the message is one line that says what to do."""


@dataclass
class PodmanConfig:
    """bugbout's podman configuration for one ``BUGBOUT_HOME``: ``storage`` is the graph
    root's parent (default ``BUGBOUT_HOME/podman``), ``driver`` its storage driver."""

    home: Path
    storage: Path | None = None
    driver: str = "overlay"
    executable: str = "podman"

    @property
    def config_dir(self) -> Path:
        """Where ``containers.conf`` and ``storage.conf`` are written."""
        return self.home / "podman"

    @property
    def storage_dir(self) -> Path:
        return self.storage or self.config_dir

    @property
    def runtime_dir(self) -> Path:
        """bugbout's podman folder on a runtime path (``/run`` as root, else
        ``XDG_RUNTIME_DIR``), which every sandbox hides: the run root and the service's
        socket live under it, with short paths."""
        runtime = Path("/run") if os.geteuid() == 0 else None
        if runtime is None and os.environ.get("XDG_RUNTIME_DIR"):
            runtime = Path(os.environ["XDG_RUNTIME_DIR"])
        if runtime is None or not os.access(runtime, os.W_OK):
            runtime = Path(tempfile.gettempdir())
        return runtime / f"bugbout-podman-{os.geteuid()}"

    @property
    def runroot(self) -> Path:
        """podman's run root (locks, mounts, conmon's sockets) for this storage: a short
        path on a runtime folder, since conmon's sockets live under it and a unix socket's
        path allows about 107 bytes (past that, every container takes 20 s to be seen
        exiting)."""
        return self.runtime_dir / digest(str(self.storage_dir))

    def environ(self) -> dict[str, str]:
        """The variables that point podman at bugbout's configuration (files written now)."""
        self.config_dir.mkdir(parents=True, exist_ok=True)
        containers, storage = self.config_dir / "containers.conf", self.config_dir / "storage.conf"
        _write_if_changed(containers, containers_conf(self.runroot))
        _write_if_changed(storage, storage_conf(self.storage_dir, self.driver, self.runroot))
        return {"CONTAINERS_CONF": str(containers), "CONTAINERS_STORAGE_CONF": str(storage)}

    def cli(self, *args: str, timeout: float = PROBE_TIMEOUT) -> subprocess.CompletedProcess[str]:
        """The podman command line with bugbout's configuration (not through the service)."""
        return subprocess.run(
            [self.executable, *args],
            env={**os.environ, **self.environ()},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )


def hard_limit(which: int) -> int:
    """The caller's hard limit (an unlimited one counts as podman's own default)."""
    _, hard = resource.getrlimit(which)
    return 1048576 if hard == resource.RLIM_INFINITY else int(hard)


def containers_conf(runroot: Path) -> str:
    """``containers.conf``: runc, cgroupfs, no network by default, ulimits within ours."""
    nofile = hard_limit(resource.RLIMIT_NOFILE)
    nproc = min(NPROC, hard_limit(resource.RLIMIT_NPROC))
    return (
        "# Written by bugbout: podman as it works on cgroup v1 hosts with capped ulimits.\n"
        "[containers]\n"
        f'default_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]\n'
        'netns = "none"\n'
        'log_driver = "k8s-file"\n'
        "[engine]\n"
        'runtime = "runc"\n'
        'cgroup_manager = "cgroupfs"\n'
        'events_logger = "file"\n'
        f"tmp_dir = {json.dumps(str(runroot / 'libpod'))}\n"
    )


def storage_conf(directory: Path, driver: str = "overlay", runroot: Path | None = None) -> str:
    """``storage.conf``: a private graph root under ``directory``, and a run root (by
    default beside it)."""
    return (
        "# Written by bugbout: its images and containers, apart from the user's.\n"
        "[storage]\n"
        f"driver = {json.dumps(driver)}\n"
        f"graphroot = {json.dumps(str(directory / 'storage'))}\n"
        f"runroot = {json.dumps(str(runroot or directory / 'run'))}\n"
    )


def _write_if_changed(path: Path, text: str) -> None:
    with contextlib.suppress(OSError):
        if path.read_text(encoding="utf-8") == text:
            return
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


def digest(*parts: str) -> str:
    """A short digest of ``parts`` (names of images and folders)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def last_line(text: str) -> str:
    """The last non-blank line of a program's output, at most 400 characters."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:400] if lines else "no error output"


def one_line(text: str) -> str:
    return " ".join(text.split())[:400]
