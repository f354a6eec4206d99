"""Every record the store writes has a JSON Schema shipped with the package, equal to what
the records say, and real stored records validate against it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from bugbout.core.report.report import SCHEMA_VERSION, report_schema
from bugbout.core.schemas import RECORDS, record_schema, shipped_schema
from bugbout.core.store.store import JOB, ORACLES, TASKS


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_the_shipped_schema_is_the_records_own(name: str) -> None:
    assert shipped_schema(name) == record_schema(name), (
        f"{name}.schema.json is stale: run `python -m bugbout.core.schemas`"
    )


def test_the_report_schema_names_the_version_reports_carry() -> None:
    version = SCHEMA_VERSION.rsplit("/", 1)[1]
    assert report_schema()["$id"].rsplit(":", 1)[1] == version


@pytest.mark.slow
def test_a_real_bouts_records_validate(bout_repo: Path) -> None:
    from bugbout import Bout

    Bout(bout_repo).run()
    store = bout_repo / ".bugbout"
    checked = {
        "tasks": [store / TASKS],
        "oracles": [store / ORACLES],
        "job": [store / JOB],
        "attempt": sorted((store / "attempts").rglob("*.json")),
        "matrix": sorted((store / "matrices").glob("*.json")),
        "mining": [store / "mining.json"],
        **{
            kind: sorted((store / "evidence").rglob(f"{kind}-*.json"))
            for kind in ("base", "score", "audit")
        },
    }
    for name, paths in checked.items():
        assert paths, name
        validator = jsonschema.Draft202012Validator(shipped_schema(name))
        for path in paths:
            errors = [e.message for e in validator.iter_errors(json.loads(path.read_text()))]
            assert not errors, (path, errors[:3])
