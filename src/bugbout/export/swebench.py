"""The tasks as a SWE-bench dataset: one JSON object per line, SWE-bench's fields."""

from __future__ import annotations

import json
from pathlib import Path

from bugbout.export.instances import SweBenchInstance

FIELDS = (
    "instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement",
    "hints_text", "created_at", "version", "FAIL_TO_PASS", "PASS_TO_PASS",
    "environment_setup_commit",
)  # fmt: skip
"""The fields of a SWE-bench instance, in its dataset's order."""


def write_swebench(found: list[SweBenchInstance], path: Path) -> None:
    """Write ``found`` to ``path`` as JSON lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({key: one.fields[key] for key in FIELDS}) for one in found]
    path.write_text("".join(f"{line}\n" for line in lines))
