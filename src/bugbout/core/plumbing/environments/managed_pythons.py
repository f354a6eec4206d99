"""Pythons uv provides when a fix's era needs a version this machine does not have.

They are installed into ``BUGBOUT_HOME/pythons`` (uv's ``UV_PYTHON_INSTALL_DIR``), never
into the user's own uv directory, and no executable is linked onto ``PATH``. uv's own
variables for where downloads come from apply: ``UV_PYTHON_INSTALL_MIRROR`` and
``UV_PYTHON_DOWNLOADS_JSON_URL``. ``environment.python-downloads`` says whether uv may download:
``automatic`` (when the era's version is missing), ``manual`` or ``never`` (only Pythons
already installed there are used).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from bugbout.core.contract.errors import EnvironmentFailure

PythonDownloads = Literal["automatic", "manual", "never"]
SETTING = "environment.python-downloads"
DIRECTORY = "pythons"
"""The folder of ``BUGBOUT_HOME`` the Pythons go to."""
FIND_TIMEOUT = 60.0
INSTALL_TIMEOUT = 900.0


def pythons_directory(home: Path) -> Path:
    """Where the Pythons uv provides for bugbout are installed."""
    return home / DIRECTORY


@dataclass(frozen=True)
class EraInterpreter:
    """The interpreter that tests a fix; when it stands in for the fix's era, that era's
    version and what the tests lack (one line)."""

    path: Path
    era: str = ""
    lacks: str = ""


@dataclass
class ManagedPythons:
    """The Pythons uv installs into ``directory``, and the one an era needs.

    ``uv`` is the uv executable; ``explain`` turns uv's error output into one line.
    """

    uv: str
    directory: Path
    explain: Callable[[str], str]
    downloads: PythonDownloads = "automatic"
    _failed: dict[str, str] = field(default_factory=dict, init=False, repr=False)

    def interpreter(
        self,
        declared: str | None,
        fix_date: str | None,
        pinned: str | None,
        classified: tuple[str, ...] = (),
    ) -> EraInterpreter:
        """The interpreter of a fix's era (its ``classified`` versions: those its trove
        classifiers name): on this machine (pyenv, ``PATH``), else one installed here
        before, else one uv downloads now when downloads are allowed; for an era uv
        provides no Python of (before 3.8), the oldest one here stands in
        (:func:`~bugbout.core.plumbing.environments.interpreters.stand_in`), saying what it lacks,
        as one newer than every version the classifiers name says too.

        Raises an :class:`EnvironmentFailure` naming the version when there is none.
        """
        from bugbout.core.plumbing.environments import interpreters

        local = interpreters.available_interpreters()
        version = interpreters.era_python(declared, fix_date, local, pinned, classified)
        if version in local:  # resolved: the sandbox may not show the links on the way
            lacks = "" if pinned else interpreters.classified_lacks(classified, fix_date, version)
            return EraInterpreter(Path(local[version]).resolve(), lacks=lacks)
        standing = None if pinned else interpreters.stand_in(declared, version, local)
        if standing is None:
            return EraInterpreter(self.provide(version))
        found = self.find(version)  # installed here for bugbout before
        if found is not None:
            return EraInterpreter(found)
        minor, lacks = standing
        return EraInterpreter(Path(local[minor]).resolve(), version, lacks)

    def provide(self, version: str) -> Path:
        """Python ``version`` (``"3.8"``) installed here, downloaded first if allowed."""
        found = self.find(version)
        if found is not None:
            return found
        if self.downloads != "automatic":
            raise EnvironmentFailure(self._refusal(version))
        if version not in self._failed:
            answer = self._run(
                ["python", "install", "--no-bin", version], INSTALL_TIMEOUT, downloads=True
            )
            if answer.returncode != 0:
                self._failed[version] = (
                    f"Python {version} (this fix's era) is not on this machine and uv could "
                    f"not download it: {self.explain(answer.stderr)}; install it (e.g. "
                    f"`pyenv install {version}`) or set project.python"
                )
        if version in self._failed:  # asked once per process: a download is slow to fail
            raise EnvironmentFailure(self._failed[version])
        found = self.find(version)
        if found is None:
            raise EnvironmentFailure(
                f"uv installed Python {version} into {self.directory} but does not find it "
                f"there; remove {self.directory} and try again"
            )
        return found

    def find(self, version: str) -> Path | None:
        """The interpreter of Python ``version`` installed here, if there is one."""
        if not self.directory.is_dir():
            return None
        answer = self._run(
            ["python", "find", "--system", "--managed-python", version], FIND_TIMEOUT
        )
        path = Path(answer.stdout.strip())
        return path.resolve() if answer.returncode == 0 and path.is_file() else None

    def downloadable(self) -> list[str]:
        """The minor versions uv could download for this platform (from its list, or the
        one ``UV_PYTHON_DOWNLOADS_JSON_URL`` names), whatever ``downloads`` says."""
        answer = self._run(
            ["python", "list", "--all-versions", "--only-downloads", "--output-format", "json"],
            FIND_TIMEOUT,
            downloads=True,
        )
        try:
            entries = json.loads(answer.stdout) if answer.returncode == 0 else []
        except json.JSONDecodeError:
            return []
        minors = {
            f"{entry['version_parts']['major']}.{entry['version_parts']['minor']}"
            for entry in entries
            if isinstance(entry, dict)
            and entry.get("implementation") == "cpython"
            and entry.get("variant", "default") == "default"
            and isinstance(entry.get("version_parts"), dict)
        }
        return sorted(minors, key=lambda v: tuple(int(n) for n in v.split(".")))

    def _refusal(self, version: str) -> str:
        manual = (
            f", or install it for bugbout with `UV_PYTHON_INSTALL_DIR={self.directory} uv "
            f"python install {version}`"
            if self.downloads == "manual"
            else ""
        )
        return (
            f"Python {version} (this fix's era) is not on this machine and {SETTING} is "
            f"{self.downloads}; install it (e.g. `pyenv install {version}`){manual}, or set "
            f"{SETTING}=automatic"
        )

    def _run(
        self, args: list[str], timeout: float, downloads: bool = False
    ) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "UV_NO_CONFIG": "1",
            "UV_NO_PROGRESS": "1",
            "UV_PYTHON_INSTALL_DIR": str(self.directory),
            "UV_PYTHON_DOWNLOADS": "automatic" if downloads else "never",
        }
        for variable in ("VIRTUAL_ENV", "UV_NO_MANAGED_PYTHON", "UV_PYTHON_PREFERENCE"):
            env.pop(variable, None)  # they would contradict --managed-python
        try:
            return subprocess.run(
                [self.uv, *args],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                env=env,
                cwd=self.directory if self.directory.is_dir() else None,
            )
        except subprocess.TimeoutExpired:
            reason = f"error: `uv {' '.join(args)}` timed out after {timeout:.0f} s"
        except OSError as exc:
            reason = f"error: cannot run uv: {exc}"
        return subprocess.CompletedProcess([self.uv, *args], 1, "", reason)
