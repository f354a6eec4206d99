"""Running a command with the network switched off.

Test runs get no network: the command runs in a fresh network namespace that has only
a loopback interface. bubblewrap is preferred (it brings loopback up and kills the whole
namespace with its parent); ``unshare`` is the fallback where bubblewrap is missing.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

from bugbout.core.contract.errors import EnvironmentFailure


def offline(argv: list[str]) -> list[str]:
    """``argv`` wrapped so that it runs with no network."""
    return [*_offline_prefix(), *argv]


@functools.cache
def _offline_prefix() -> tuple[str, ...]:
    """The first way of switching the network off that works on this machine."""
    candidates: list[tuple[str, ...]] = []
    bwrap = shutil.which("bwrap")
    if bwrap:
        # As root bwrap keeps every capability unless told: the read-only /proc/sys could
        # be remounted read-write.
        drop = ("--cap-drop", "ALL") if os.geteuid() == 0 else ()
        candidates.append(
            (bwrap, "--dev-bind", "/", "/", "--proc", "/proc", "--ro-bind-try", "/proc/sys",
             "/proc/sys", "--unshare-net", *drop,
             "--unshare-pid", "--die-with-parent", "--")
        )  # fmt: skip
    unshare = shutil.which("unshare")
    if unshare:
        flags = ("--net",) if os.geteuid() == 0 else ("--map-root-user", "--net")
        candidates.append((unshare, *flags, "--"))
    for prefix in candidates:
        probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=30, check=False)
        if probe.returncode == 0:
            return prefix
    raise EnvironmentFailure(
        "cannot run tests without network: install bubblewrap (apt install bubblewrap) "
        "or allow unprivileged user namespaces"
    )
