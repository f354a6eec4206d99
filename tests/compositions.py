"""The smallest project to compose a command's settings for."""

from __future__ import annotations

from pathlib import Path


def project(root: Path, extra: str = "") -> Path:
    """``root`` holding a ``bugbout.yaml`` for a package in ``src/calc``, plus ``extra``."""
    (root / "bugbout.yaml").write_text(
        f"defaults: [base, _self_]\nproject: {{source: src/calc}}\n{extra}"
    )
    return root
