"""JSON Schemas of the records the store writes, made from the records themselves.

The package ships them beside the report's (``bugbout/schemas/<name>.schema.json``) so
tools that read a store need not import bugbout; a test keeps the shipped files equal to
what the records say. ``python -m bugbout.core.schemas`` writes them again. It sits
beside the stages, not in the store: some records are a stage's own (mining's, the base
run's).
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bugbout.core.mine.mining import Mining
from bugbout.core.plumbing.selection.affected import BaseRun
from bugbout.core.store.race_records import Attempt, Audit
from bugbout.core.store.records import FORMAT, OracleSet, TaskSet
from bugbout.core.store.verdict_records import (
    AuditSet,
    Job,
    Matrix,
    PatchResolution,
    ResolutionSet,
    VerdictSet,
)

RECORDS: dict[str, tuple[type[BaseModel], str]] = {
    "tasks": (TaskSet, "tasks.json: what mining found, each task and what was left out"),
    "mining": (Mining, "mining.json: the last mining's result, under the key it was made for"),
    "oracles": (OracleSet, "oracles.json: each task's ground truth, by task id"),
    "attempt": (Attempt, "attempts/<task>/<contestant>/<key>.json: one agent's attempt"),
    "matrix": (Matrix, "matrices/<task>.json: every patch run against every test"),
    "verdicts": (VerdictSet, "verdicts.json: each judge's pick, by task and judge"),
    "resolutions": (ResolutionSet, "resolutions.json: each patch scored on the hidden tests"),
    "audits": (AuditSet, "audits.json: each patch's audit, by task and contestant"),
    "job": (Job, "job.json: one bout's (or sweep job's) run and what its report covers"),
    "base": (BaseRun, "evidence/<task>/base-<key>.json: the unfixed code's suite run"),
    "score": (PatchResolution, "evidence/<task>/score-<key>.json: one patch scored"),
    "audit": (Audit, "evidence/<task>/audit-<key>.json: one patch's audit"),
}
"""Each record file kind: its model and where the store keeps it."""


def record_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the record ``name`` (a key of :data:`RECORDS`),
    as the store writes it."""
    model, where = RECORDS[name]
    schema = model.model_json_schema(by_alias=True, mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:bugbout:schema:{name}:{FORMAT}",
        "title": f"bugbout {name}",
        "description": where,
        **{key: value for key, value in schema.items() if key not in ("title", "description")},
    }


def shipped_schema(name: str) -> dict[str, Any]:
    """The schema of ``name`` as the package ships it."""
    text = resources.files("bugbout.schemas").joinpath(f"{name}.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def write_schemas(folder: Path) -> list[Path]:
    """Write every record's schema into ``folder``: the files written."""
    written = []
    for name in RECORDS:
        path = folder / f"{name}.schema.json"
        path.write_text(json.dumps(record_schema(name), indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    target = Path(str(resources.files("bugbout.schemas")))
    for path in write_schemas(target):
        sys.stdout.write(f"wrote {path}\n")
