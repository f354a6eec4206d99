"""Containers that need no image: this machine's own root, read-only.

The container's root is an empty skeleton with a stand-in for each top-level entry of
this machine (made once per layout, kept beside bugbout's podman configuration), each
entry then bind-mounted read-only from the host by the runner, the caller's own paths
on top. The podman sandbox runs every confined process so, and the check that podman
works here runs ``true`` so.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from bugbout.sandbox.podman.config import PodmanConfig
from bugbout.sandbox.podman.runner import READABLE, RunSpec

OWN_TOP_LEVEL = ("proc", "sys", "dev", "tmp", "run")
"""Top-level directories the container has its own of (not bound from the host)."""
STICKY = ("tmp",)
"""Stand-ins anyone may write in (sticky), as the host's are."""
SKIPPED_TOP_LEVEL = ("lost+found",)
INIT_PATHS = (
    "/usr/libexec/podman/catatonit",
    "/usr/libexec/catatonit/catatonit",
    "/usr/local/libexec/podman/catatonit",
    "/usr/bin/catatonit",
)
"""Where podman's init (catatonit) is found: it reaps orphans and forwards signals."""


def host_spec(
    podman: PodmanConfig,
    program: str,
    argv: list[str],
    workdir: Path,
    access: dict[Path, str],
    *,
    role: str,
    network: bool = False,
    init: bool = True,
    tmp_size: int | None = None,
    user: tuple[int, int] | None = None,
) -> RunSpec:
    """What runs ``argv`` with ``program`` (podman) in a container of this machine's
    root: every top-level entry readable, then ``access`` (path: masked, readable or
    writable), ancestors first; podman's init as pid 1 with ``init``, if installed; each
    private tmpfs and ``/dev/shm`` ``tmp_size`` bytes, when given; as ``user`` (uid,
    gid), when given."""
    rootfs, top_level = host_root(podman.config_dir)
    layered = {path: READABLE for path in top_level} | access
    ordered = sorted(layered, key=lambda path: (len(path.parts), str(path)))
    found = next((p for p in INIT_PATHS if os.access(p, os.X_OK)), None)
    return RunSpec(
        podman=program,
        config=podman.environ(),
        argv=list(argv),
        workdir=str(workdir),
        role=role,
        rootfs=str(rootfs),
        layers=[(str(path), layered[path]) for path in ordered],
        network=network,
        init=found if init else None,
        tmp_size=tmp_size,
        user=f"{user[0]}:{user[1]}" if user else None,
    )


def host_root(folder: Path) -> tuple[Path, list[Path]]:
    """The container's root in ``folder`` (an empty stand-in for each top-level entry of
    this machine, made once per layout) and the top-level entries to bind into it."""
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
    # The stand-ins' modes are part of the layout: podman gives a tmpfs the mode of the
    # folder it covers, and /tmp must be anyone's, as on a host (a confined user's too).
    key = hashlib.sha256(repr([*sorted(entries), STICKY]).encode()).hexdigest()[:16]
    rootfs = folder / f"sandbox-root-{key}"
    if not rootfs.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=".sandbox-root-", dir=folder))
        for name, kind, target in entries:
            if kind == "link":
                (partial / name).symlink_to(target)
            elif kind == "dir":
                (partial / name).mkdir()
                if name in STICKY:
                    (partial / name).chmod(0o1777)
            else:
                (partial / name).touch()
        partial.chmod(0o755)
        try:
            partial.rename(rootfs)
        except OSError:  # made meanwhile by another process
            shutil.rmtree(partial, ignore_errors=True)
    top_level = [
        Path("/", name) for name, kind, _ in entries if kind != "link" and name not in OWN_TOP_LEVEL
    ]
    return rootfs, top_level
