"""The world the sandbox tests attack and how they run a script in it (the fixtures
that build it are in conftest.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

import components
from bugbout.plugins.sandboxes.bubblewrap import Bubblewrap
from bugbout.plugins.sandboxes.none import NoSandbox
from bugbout.plugins.sandboxes.seatbelt import Seatbelt
from bugbout.sandbox.confinement import Confinement

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
PYTHON = sys.executable
PYTHON_PREFIXES = tuple(
    sorted(
        {
            Path(sys.prefix),
            Path(sys.base_prefix),
            Path(os.path.realpath(sys.executable)).parent.parent,
        }
    )
)
"""Where this interpreter lives: it may be under /tmp (a virtualenv in a CI checkout),
which sandboxes hide, so every confinement that runs it re-exposes these read-only."""
ON_LINUX = sys.platform.startswith("linux")


@dataclass
class World:
    root: Path
    marker: str
    repo: Path
    store: Path
    bugbout_home: Path
    workdir: Path
    logs: Path
    other_attempt: Path
    credentials: Path
    test_env: Path
    home: Path
    netrc: Path
    outside: Path

    def confinement(self, network: bool = False, **changes: object) -> Confinement:
        fields: dict[str, object] = {
            "workdir": self.workdir,
            "writable": (self.logs,),
            "readable": (self.test_env, *PYTHON_PREFIXES),
            "masked": (self.repo, self.store, self.bugbout_home, self.home, self.netrc),
            "network": network,
        }
        fields.update(changes)
        return Confinement.model_validate(fields)

    def secret(self, name: str) -> str:
        return f"{name}-{self.marker}"


def _make(name: str) -> Bubblewrap | Seatbelt:
    """A sandbox that works here; installed but broken is a failure, not a skip."""
    if name == "bubblewrap":
        if not ON_LINUX:
            pytest.skip("bubblewrap needs Linux")
        if shutil.which("bwrap") is None:
            components.missing("bubblewrap", "bwrap is not installed")
        sandbox: Bubblewrap | Seatbelt = Bubblewrap()
    else:
        if sys.platform != "darwin":
            pytest.skip("seatbelt needs macOS")
        sandbox = Seatbelt()
    problem = sandbox.problem()
    assert problem is None, problem
    return sandbox


def run(
    sandbox: Bubblewrap | Seatbelt | NoSandbox,
    confinement: Confinement,
    script: str,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """``script`` run by ``sh`` under ``sandbox``, started in the working directory."""
    argv = sandbox.wrap(["/bin/sh", "-c", script], confinement)
    return subprocess.run(
        argv,
        cwd=confinement.workdir,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def python(code: str) -> str:
    """A shell command running ``code`` with this interpreter."""
    return f"{PYTHON} -c {_sh(textwrap.dedent(code))}"


def _sh(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
