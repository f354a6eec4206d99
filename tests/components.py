"""The machine's components the tests need (README: Set up on a new machine).

A test that cannot run without one calls :func:`missing`, or is marked
``@pytest.mark.requires(COMPONENT)``. Without the component it FAILS, saying how to
install it, unless the run allows skipping it: ``nox -s tests -- --allow-skip podman``
(several: repeat the option; ``--allow-skip all``). So a run that says it passed has
run everything.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable

import pytest

INSTALL = {
    "bubblewrap": "apt install bubblewrap",
    "podman": "apt install podman runc conmon fuse-overlayfs uidmap slirp4netns debootstrap",
    "chromium": "apt install chromium",
    "compiler": "apt install gcc libc6-dev",
    "swebench": (
        "run the tests through `nox -s tests`, which installs SWE-bench's harness in an "
        "environment of its own (or name its Python with BUGBOUT_SWEBENCH_PYTHON)"
    ),
    "harbor": (
        "run the tests through `nox -s tests`, which installs Harbor in an environment of "
        "its own on Python 3.12 or later (or name its Python with BUGBOUT_HARBOR_PYTHON)"
    ),
    "agent-clis": (
        "apt install nodejs npm, then run the tests through `nox -s tests`, which installs "
        "the pinned agent CLIs and mini-swe-agent (or name a `mini` with BUGBOUT_MINI)"
    ),
    "js-runners": (
        "apt install nodejs npm: the tests install the JavaScript runners (Vitest, Jest, "
        "Mocha) from npm by name into ~/.cache/bugbout-tests/js-runners"
    ),
}
"""Each component and how to install it (on Debian; .ci/run does all of it)."""

FOUND: dict[str, Callable[[], bool]] = {
    "swebench": lambda: os.access(os.environ.get("BUGBOUT_SWEBENCH_PYTHON", ""), os.X_OK),
    "harbor": lambda: os.access(os.environ.get("BUGBOUT_HARBOR_PYTHON", ""), os.X_OK),
    "bubblewrap": lambda: sys.platform == "linux" and shutil.which("bwrap") is not None,
    "podman": lambda: shutil.which("podman") is not None,
    "compiler": lambda: shutil.which((os.environ.get("CC") or "cc").split()[0]) is not None,
    "js-runners": lambda: all(shutil.which(name) for name in ("node", "npm", "npx")),
    "chromium": lambda: any(
        shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")
    ),
}
"""How a marker's component is looked for (the agent CLIs are looked for one by one)."""


class Missing(pytest.skip.Exception):  # type: ignore[misc,name-defined]
    """A component this test needs is not on the machine."""

    def __init__(self, component: str, what: str) -> None:
        super().__init__(what)
        self.component = component
        self.what = what


def missing(component: str, what: str) -> None:
    """Stop this test: ``component`` (a key of :data:`INSTALL`) is missing; ``what`` says
    which part of it."""
    raise Missing(component, what)


def allowed(config: pytest.Config, component: str) -> bool:
    """Whether this run may skip tests that need ``component``."""
    chosen = set(config.getoption("allow_skip") or ())
    for entry in os.environ.get("BUGBOUT_ALLOW_SKIP", "").split(","):
        if entry.strip():
            chosen.add(entry.strip())
    return bool({component, "all"} & chosen)


def failure(component: str, what: str) -> str:
    return (
        f"{what}: this test needs {component} ({INSTALL[component]}); "
        f"or run with --allow-skip {component} to skip it"
    )
