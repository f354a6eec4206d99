"""Running bugbout's command line as a user does, in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def bugbout(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=600,
        check=False,
    )
