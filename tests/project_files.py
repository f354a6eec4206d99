"""Writing a project's files, dedented, for the tests that read its metadata."""

from __future__ import annotations

import textwrap
from pathlib import Path


def write(tree: Path, name: str, text: str) -> Path:
    path = tree / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path
