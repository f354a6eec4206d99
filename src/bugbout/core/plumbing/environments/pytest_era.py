"""The pytest an environment holds, and the options of bugbout's test runs it understands.

Every test run neutralises the project's ``addopts`` (``--override-ini=addopts=``), fixes
the rootdir at the tree (``--rootdir``) and goes on past a module that cannot be collected
(``--continue-on-collection-errors``). pytest learnt these options over the years, and an
older pytest rejects the whole command line ("unrecognized arguments"):

- ``-o`` and ``--continue-on-collection-errors`` came with pytest 3.0: before it, a
  collection error never stopped a run, and the outcome plugin takes the ini file's
  ``addopts`` off the command line before pytest parses it (``BUGBOUT_DROP_ADDOPTS``;
  the early options among them, ``-p`` and ``--confcutdir``, have been read by then);
- ``--rootdir`` came with pytest 3.5: before it, the outcome plugin fixes the rootdir
  itself, at the working directory (the tree), before pytest collects anything
  (``BUGBOUT_ROOTDIR``).

pytest 2.7 is the oldest bugbout's plugins run on (hook wrappers came with it); an older
one is refused with that reason.

Each environment's pytest version is what its builder resolved (the ``pytest`` of its
``versions``), else asked once per process (``pytest --version`` in an empty directory,
no network), cached by the environment's key.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from bugbout.core.plumbing.environments.environment import Environment, resolved
from bugbout.sandbox.network import offline

OLDEST = (2, 7)
"""The oldest pytest bugbout runs: its plugins need hook wrappers."""
OVERRIDE_OPTION = (3, 0)
"""The first pytest that takes ``-o`` and ``--continue-on-collection-errors``."""
ROOTDIR_OPTION = (3, 5)
"""The first pytest that takes ``--rootdir``."""
ROOTDIR_VARIABLE = "BUGBOUT_ROOTDIR"
"""Set for a pytest without ``--rootdir``: the outcome plugin fixes the rootdir itself."""
ADDOPTS_VARIABLE = "BUGBOUT_DROP_ADDOPTS"
"""Set for a pytest without ``-o``: the outcome plugin sets the ``addopts`` aside."""
PROBE_TIMEOUT = 120.0
_VERSION = re.compile(r"\bpytest(?: version)? v?(\d+)\.(\d+)")


@dataclass(frozen=True)
class PytestEra:
    """The pytest of one environment, by its version (``None``: it did not say)."""

    version: tuple[int, int] | None

    @property
    def supported(self) -> bool:
        return self.version is None or self.version >= OLDEST

    def unsupported(self) -> str:
        """Why this pytest cannot run bugbout's test runs (a one-line reason)."""
        assert self.version is not None
        found, oldest = ".".join(map(str, self.version)), ".".join(map(str, OLDEST))
        return (
            f"pytest {found} is older than {oldest}, the oldest bugbout's plugins run on "
            f"(it has no hook wrappers): require pytest>={oldest} in project.test-dependencies"
        )

    def neutral(self) -> list[str]:
        """The options that set the project's ``addopts`` aside (none before pytest 3.0:
        a command line without the outcome plugin keeps them). One word: pytest 3's
        ``-o`` takes every value after it, test paths included."""
        return ["--override-ini=addopts="] if self._has(OVERRIDE_OPTION) else []

    def options(self, tree: Path) -> list[str]:
        """Every option a test run gives pytest about the project's configuration."""
        tolerant = ["--continue-on-collection-errors"] if self._has(OVERRIDE_OPTION) else []
        fixed = ["--rootdir", str(tree)] if self._has(ROOTDIR_OPTION) else []
        return [*self.neutral(), *tolerant, *fixed]

    def variables(self) -> dict[str, str]:
        """What the outcome plugin must do in place of an option this pytest lacks."""
        found = {} if self._has(ROOTDIR_OPTION) else {ROOTDIR_VARIABLE: "1"}
        return found | ({} if self._has(OVERRIDE_OPTION) else {ADDOPTS_VARIABLE: "1"})

    def _has(self, since: tuple[int, int]) -> bool:
        return self.version is None or self.version >= since


class _Probed:
    """The eras found so far, by environment key: one probe per environment and process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.eras: dict[str, PytestEra] = {}


_probed = _Probed()


def pytest_era(environment: Environment) -> PytestEra:
    """The pytest ``environment`` runs, asked once per process (again when it did not
    say: the sandbox may have failed)."""
    with _probed.lock:
        found = _probed.eras.get(environment.key)
    if found is None:
        found = PytestEra(_resolved(environment) or _version(environment))
        if found.version is not None:
            with _probed.lock:
                _probed.eras[environment.key] = found
    return found


def _resolved(environment: Environment) -> tuple[int, int] | None:
    """The pytest version the environment's builder resolved, when it says."""
    found = re.match(r"(\d+)\.(\d+)", resolved(environment)[0].get("pytest", ""))
    return (int(found[1]), int(found[2])) if found else None


def _version(environment: Environment) -> tuple[int, int] | None:
    """``pytest --version`` in an empty directory, without network; ``None`` when it
    does not say (the test run then shows what is wrong)."""
    with tempfile.TemporaryDirectory(prefix="bugbout-pytest-version-") as empty:
        command = environment.command(["--version"], Path(empty), [])
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "HOME": empty,
            "PYTHONDONTWRITEBYTECODE": "1",
            **command.env,
        }
        try:
            done = subprocess.run(
                command.argv if command.contained else offline(command.argv),
                cwd=command.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=PROBE_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    found = _VERSION.search((done.stdout + done.stderr).decode("utf-8", "replace"))
    return (int(found[1]), int(found[2])) if found else None
