"""``bugbout export --format swe-bench|harbor PATH``: the project's tasks written out."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.contract.errors import ConfigError
from bugbout.core.store.store import Store
from bugbout.export.harbor import write_harbor
from bugbout.export.instances import instances
from bugbout.export.swebench import write_swebench

FORMATS = ("swe-bench", "harbor")


def run_export(root: Path, format: str, target: Path, repo: str | None = None) -> str:
    """Export the tasks of the project at ``root`` to ``target``; what was written."""
    if format not in FORMATS:
        raise ConfigError(f"--format {format}: choose one of {', '.join(FORMATS)}")
    found = instances(root, Store(root / ".bugbout"), repo)
    if format == "swe-bench":
        write_swebench(found, target)
        return f"wrote {len(found)} instance(s) to {target}"
    written = write_harbor(found, root, target)
    return f"wrote {len(written)} Harbor task(s) under {target}"
