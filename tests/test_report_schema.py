"""The JSON report's schema: the report validates, bad values do not, every field is described."""

from __future__ import annotations

import json

import pytest

from bugbout.core.report.costs import CostRow, Costs
from bugbout.core.report.reasons import Abstention, Reasons, Unfinished
from bugbout.core.report.report import (
    SCHEMA_VERSION,
    AgentRow,
    AuditRow,
    Baseline,
    Found,
    GateRow,
    MergeGate,
    Picking,
    PolicyPicks,
    Report,
    SeparationRow,
    TaskRow,
    TierFound,
    TierRate,
    Totals,
    UsageRow,
    report_schema,
)
from bugbout.core.report.report_tasks import (
    AuditView,
    Diff,
    FailingTest,
    Grid,
    GridCell,
    GridRow,
    PatchView,
    PickView,
    TaskPage,
)
from bugbout.core.report.rounds_report import AgentRounds, RoundRow, Rounds
from bugbout.core.store.race_records import AttemptStatus, Score
from bugbout.plugins.reporters.json import render_json
from report_records import _validate


def test_json_validates_against_the_shipped_schema(report: Report) -> None:
    text = render_json(report)
    document = json.loads(text)
    assert next(iter(document)) == "schema"
    assert document["schema"] == SCHEMA_VERSION
    _validate(document)
    assert Report.model_validate_json(text) == report
    assert document["picking"]["oracle"] == {"resolved": 2, "rate": 1.0, "agent": None}


def test_the_schema_rejects_what_the_report_never_holds(report: Report) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(report_schema())
    good = json.loads(render_json(report))
    for path, value in (
        (("schema",), "bugbout.report/0"),
        (("agents", 0, "resolve_rate"), 1.5),
        (("agents", 0, "resolved"), -1),
        (("agents", 0, "failures"), {"finished": 1}),
        (("tasks", 0, "scores"), {"alpha": "great"}),
        (("merge_gate", "audits", 0, "verdicts"), {"FINE": 1}),
        (("separation", 0, "role"), "reviewer"),
        (("found", "surprise"), 1),
        (("pages", 0, "patches", 0, "role"), "reviewer"),
        (("pages", 0, "patches", 0, "diff", "truncated"), -1),
        (("pages", 0, "matrix", "rows", 0, "cells", 0, "failed"), "2"),
    ):
        bad = json.loads(json.dumps(good))
        target = bad
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        assert not validator.is_valid(bad), path


def test_the_schema_describes_every_field() -> None:
    """The hand-written schema and the record stay in step, key for key."""
    schema = report_schema()
    defs = schema["$defs"]
    assert set(schema["properties"]) == {
        field.alias or name for name, field in Report.model_fields.items()
    }
    assert set(schema["required"]) == set(schema["properties"])
    for model, key in (
        (AgentRow, "agent"),
        (TierRate, "tier_rate"),
        (TierFound, "tier_found"),
        (PolicyPicks, "policy_picks"),
        (Baseline, "baseline"),
        (Picking, "picking"),
        (GateRow, "gate"),
        (AuditRow, "audit"),
        (MergeGate, "merge_gate"),
        (SeparationRow, "separation"),
        (Found, "found"),
        (TaskRow, "task"),
        (UsageRow, "usage"),
        (Totals, "totals"),
        (CostRow, "cost_row"),
        (Costs, "costs"),
        (RoundRow, "round"),
        (AgentRounds, "agent_rounds"),
        (Unfinished, "unfinished"),
        (Abstention, "abstention"),
        (TaskPage, "task_page"),
        (Diff, "diff"),
        (PatchView, "patch_view"),
        (AuditView, "audit_view"),
        (FailingTest, "failing_test"),
        (Grid, "grid"),
        (GridRow, "grid_row"),
        (GridCell, "grid_cell"),
        (PickView, "pick_view"),
    ):
        assert set(defs[key]["properties"]) == set(model.model_fields), model
        assert set(defs[key]["required"]) == set(model.model_fields), model
        assert defs[key]["additionalProperties"] is False
    for model, key in ((Rounds, "rounds"), (Reasons, "reasons")):
        part = schema["properties"][key]
        assert set(part["properties"]) == set(part["required"]) == set(model.model_fields)
    assert defs["score"]["enum"] == [score.value for score in Score]
    assert "audit_verdict" not in defs  # an audit's verdict is a score
    assert set(defs["failed_status"]["enum"]) == {s.value for s in AttemptStatus} - {"finished"}
