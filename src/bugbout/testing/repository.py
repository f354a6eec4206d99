"""Building real git repositories with a chosen history, for tests and the demo."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path


class RepositoryBuilder:
    """A git repository whose commits a test writes one by one, with fixed dates.

    Example::

        repo = RepositoryBuilder(tmp_path / "repo")
        repo.commit("Initial", {"src/pkg/__init__.py": "", "tests/test_a.py": "..."})
        fix = repo.commit("Fix crash on empty input (#12)", {"src/pkg/core.py": "..."})
    """

    def __init__(self, path: Path, *, branch: str = "main") -> None:
        self.path = path
        self._tick = 0
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "--quiet", f"--initial-branch={branch}")

    def git(self, *args: str) -> str:
        """Run git in the repository with a fixed identity and clock."""
        self._tick += 1
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "Maintainer",
            "GIT_AUTHOR_EMAIL": "maintainer@example.invalid",
            "GIT_COMMITTER_NAME": "Maintainer",
            "GIT_COMMITTER_EMAIL": "maintainer@example.invalid",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
        }
        if args and args[0] in ("commit", "merge"):
            seconds = 1_700_000_000 + self._tick * 3600
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{seconds} +0000"
        result = subprocess.run(
            ["git", "-C", str(self.path), *args],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode:
            raise RuntimeError(f"git {' '.join(args)} failed: {result.stderr.strip()}")
        return result.stdout.strip()

    def write(self, files: Mapping[str, str]) -> None:
        """Write ``files`` (path → text) into the working tree."""
        for relative, text in files.items():
            target = self.path / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)

    def remove(self, paths: Iterable[str]) -> None:
        for relative in paths:
            (self.path / relative).unlink()

    def commit(
        self,
        message: str,
        files: Mapping[str, str] | None = None,
        *,
        remove: Iterable[str] = (),
    ) -> str:
        """Write ``files``, delete ``remove``, commit everything; returns the sha."""
        self.write(files or {})
        self.remove(remove)
        self.git("add", "--all")
        self.git("commit", "--quiet", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    def branch(self, name: str, *, start: str = "HEAD") -> None:
        """Create branch ``name`` at ``start`` and switch to it."""
        self.git("checkout", "--quiet", "-b", name, start)

    def switch(self, name: str) -> None:
        self.git("checkout", "--quiet", name)

    def merge(self, branch: str, message: str) -> str:
        """Merge ``branch`` into the current branch with a merge commit."""
        self.git("merge", "--quiet", "--no-ff", branch, "-m", message)
        return self.head()
