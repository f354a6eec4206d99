"""Running ``bugbout doctor`` in a subprocess on a small configured repository, and reading its
report's lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from bugbout.testing import RepositoryBuilder

SECRETS = {
    "OPENAI_API_KEY": "sk-user-openai-secret",
    "ANTHROPIC_API_KEY": "sk-user-anthropic-secret",
    "GEMINI_API_KEY": "user-gemini-secret",
    "GOOGLE_API_KEY": "user-google-secret",
    "CODEX_API_KEY": "user-codex-secret",
}


def bugbout(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", "doctor", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=900,
        check=False,
    )


def lines(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """The report's lines by check name: ``{"git": "ok    git: 2.39.5 (/usr/bin/git)"}``."""
    found = {}
    for line in result.stdout.splitlines():
        status, _, rest = line.partition("  ")
        assert status.strip() in ("ok", "FAIL"), line
        found[rest.strip().split(":", 1)[0]] = line
    return found


def configured_repo(path: Path, **config: Any) -> Path:
    """A small repository with a ``bugbout.yaml`` (``config`` merged in)."""
    repo = RepositoryBuilder(path)
    repo.commit(
        "Initial",
        {
            "src/calc/__init__.py": "",
            "src/calc/core.py": "def add(a, b):\n    return a + b\n",
            "tests/test_core.py": "def test_nothing():\n    pass\n",
        },
    )
    settings = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/calc", "tests": "tests"},
        **config,
    }
    (path / "bugbout.yaml").write_text(json.dumps(settings))
    return path


def executable(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip())
    path.chmod(0o755)
    return path
