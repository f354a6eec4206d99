"""The report says each task's tier and splits each contestant's rate by tier."""

from __future__ import annotations

import json

from bugbout.core.report.report import Report, TierFound, TierRate
from bugbout.core.report.report_build import build_report
from bugbout.plugins.reporters.json import render_json
from bugbout.render.report_sections import sections
from report_records import T1, T2, _validate, records


def _with_t2_injected() -> Report:
    found = records()
    tasks = found["tasks"]
    tasks.tasks[1].tier = "injected"  # type: ignore[attr-defined]
    return build_report(**found)  # type: ignore[arg-type]


def _table(report: Report, name: str) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    (section,) = [s for s in sections(report) if s.key == name]
    table = section.tables[0]
    return table.columns, [tuple(row) for row in table.rows]


def test_each_contestants_rate_is_split_by_tier() -> None:
    report = _with_t2_injected()
    alpha, beta = report.agents[0], report.agents[1]
    assert alpha.tiers == {
        "issue-fix": TierRate(scored=1, resolved=1, resolve_rate=1.0),
        "injected": TierRate(scored=1, resolved=0, resolve_rate=0.0),
    }
    assert beta.tiers["injected"] == TierRate(scored=1, resolved=1, resolve_rate=1.0)
    document = json.loads(render_json(report))
    _validate(document)
    assert [task["tier"] for task in document["tasks"]] == ["issue-fix", "injected", "issue-fix"]
    assert document["agents"][0]["tiers"]["injected"]["resolve_rate"] == 0.0


def test_the_tables_show_the_tier_and_split_only_when_there_are_two(report: Report) -> None:
    columns, _ = _table(report, "agents")
    assert not any(column.startswith("on ") for column in columns)
    assert report.agents[0].tiers == {}
    split = _with_t2_injected()
    columns, rows = _table(split, "agents")
    assert columns[9:11] == ("on injected", "on issue-fix")
    assert rows[0][9:11] == ("0.0% of 1", "100.0% of 1")
    _, tasks = _table(split, "tasks")
    assert [row[:2] for row in tasks[:2]] == [(T1, "#11"), (T2, "injected")]


def test_how_the_tasks_were_found_gives_each_tiers_share_scored(report: Report) -> None:
    assert report.found.tiers == {"issue-fix": TierFound(tasks=3, scored=2)}
    assert len(next(s for s in sections(report) if s.key == "found").tables) == 1  # one tier
    found = records()
    found["tasks"].tasks[2].tier = "feature"  # type: ignore[attr-defined]  # T3: not scored
    split = build_report(**found)  # type: ignore[arg-type]
    assert split.found.tiers == {
        "feature": TierFound(tasks=1, scored=0),
        "issue-fix": TierFound(tasks=2, scored=2),
    }
    (section,) = [s for s in sections(split) if s.key == "found"]
    tiers = section.tables[1]
    assert tiers.columns == ("tier", "tasks", "scored", "share scored")
    assert [tuple(row) for row in tiers.rows] == [
        ("feature", "1", "0", "0.0%"),
        ("issue-fix", "2", "2", "100.0%"),
    ]
    document = json.loads(render_json(split))
    _validate(document)
    assert document["found"]["tiers"]["feature"] == {"tasks": 1, "scored": 0}
