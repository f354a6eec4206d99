"""How costly: prices per model, each attempt's cost, cost and wall time per resolved bug,
the front of resolve rate against cost, and prices from bugbout.yaml and the command line."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from bugbout.cli import main
from bugbout.core.contract.settings import PriceSettings
from bugbout.core.report.costs import (
    CostRow,
    PriceTable,
    attempt_cost,
    packaged_prices,
    pareto_front,
    price_table,
)
from bugbout.core.report.report_build import build_report
from bugbout.core.store.race_records import Attempt, AttemptStatus, Score
from bugbout.core.store.records import Oracle, OracleSet, Task, TaskIssue, TaskSet
from bugbout.core.store.store import Store
from bugbout.core.store.verdict_records import (
    Job,
    JobAttempt,
    PatchResolution,
    ResolutionSet,
    TaskResolutions,
)
from bugbout.plugins.reporters.markdown import render_markdown

T1, T2 = "aaaa", "bbbb"
PRICE = PriceSettings(input=2, cached_input=0.5, output=10)
TABLE = PriceTable((("m", PriceSettings(model="m-*", input=2, cached_input=0.5, output=10)),), "x")


def test_each_kind_of_token_at_its_own_price() -> None:
    usage = {
        "input_tokens": 1000,
        "cache_read_tokens": 10_000,
        "cache_write_tokens": 2000,
        "output_tokens": 500,
    }
    price = PriceSettings(input=3, cached_input=0.3, cache_write=3.75, output=15)
    # 1000*3 + 10000*0.3 + 2000*3.75 + 500*15 = 21000 per million
    assert attempt_cost(usage, price) == pytest.approx(0.021)
    # without cache prices, cached input costs what input does: 13000*3 + 500*15
    assert attempt_cost(usage, PriceSettings(input=3, output=15)) == pytest.approx(0.0465)


def test_the_packaged_prices_are_dated_and_match_model_names() -> None:
    table = packaged_prices()
    assert date.fromisoformat(table.as_of)

    def entry(model: str | None) -> str | None:
        found = table.find(model)
        return found[0] if found else None

    assert entry("claude-sonnet-4-5-20250929") == "claude-sonnet-4"
    assert entry("anthropic/claude-opus-4-5-20251101") == "claude-opus-4-5"
    assert entry("claude-opus-4-1-20250805") == "claude-opus-4"
    assert entry("gpt-5.1-codex") == "gpt-5"
    assert entry("openai/gpt-5-mini") == "gpt-5-mini"
    assert entry("gemini-2.5-flash-lite") == "gemini-2.5-flash-lite"
    assert entry("GPT-4.1") == "gpt-4.1"
    assert entry("ollama/qwen3-coder:30b") is None
    assert entry(None) is None


def test_the_project_prices_come_first_and_replace_a_packaged_entry_by_name() -> None:
    table = price_table(
        {
            "gpt-5": PriceSettings(input=1, output=8),
            "local": PriceSettings(model="ollama/*", input=0, output=0),
        }
    )
    name, price = table.find("gpt-5-codex") or ("", PRICE)
    assert (name, price.input, price.model) == ("gpt-5", 1, "gpt-5*")  # the packaged pattern
    assert (table.find("ollama/qwen3-coder:30b") or ("",))[0] == "local"
    # the longest pattern wins, whatever the order
    assert (table.find("claude-opus-4-5") or ("",))[0] == "claude-opus-4-5"


def _task(task_id: str, number: int) -> Task:
    return Task(
        id=task_id, sha=task_id * 3, parent=task_id * 3 + "1", date="2026-01-01T00:00:00+00:00",
        title=f"bug {number}", issue=TaskIssue(number=number, title=f"bug {number}"),
        source_files=["src/calc/core.py"], test_files=["tests/test_core.py"],
    )  # fmt: skip


def _attempt(  # noqa: PLR0917
    task_id: str, name: str, model: str, usage: dict[str, int], wall: float, round: int = 1
) -> Attempt:
    return Attempt(
        task_id=task_id, contestant=name, key=f"{task_id}-{name}-{round}", agent="command",
        model=model, status=AttemptStatus.FINISHED, usage=usage, wall_time=wall, round=round,
    )  # fmt: skip


def _records() -> dict[str, object]:
    return {
        "tasks": TaskSet(tasks=[_task(T1, 1), _task(T2, 2)]),
        "oracles": OracleSet({t: Oracle(task_id=t, status="ok") for t in (T1, T2)}),
        "attempts": [
            _attempt(T1, "mixed", "m-1", {"input_tokens": 1000, "output_tokens": 200}, 10),
            _attempt(T2, "mixed", "m-1", {}, 20),  # usage not reported
            _attempt(T2, "mixed", "m-1", {"input_tokens": 2000, "cache_read_tokens": 100}, 30, 2),
            _attempt(T1, "silent", "m-2", {}, 5),
            _attempt(T2, "silent", "m-2", {}, 5),
            _attempt(T1, "odd", "weird-model", {"output_tokens": 7}, 1),
        ],
        "resolutions": [
            PatchResolution(task_id=T1, contestant="mixed", score=Score.RESOLVED),
            PatchResolution(task_id=T2, contestant="mixed", score=Score.WRONG_FIX),
            PatchResolution(task_id=T1, contestant="silent", score=Score.RESOLVED),
            PatchResolution(task_id=T2, contestant="silent", score=Score.RESOLVED),
            PatchResolution(task_id=T1, contestant="odd", score=Score.RESOLVED),
        ],
        "verdicts": [],
        "audits": [],
        "matrices": [],
    }


def test_cost_per_attempt_and_per_resolved_bug_with_usage_missing() -> None:
    report = build_report(**_records(), prices=TABLE)  # type: ignore[arg-type]
    rows = {row.name: row for row in report.costs.agents}
    mixed = rows["mixed"]
    # 1000*2 + 200*10 = 4000, and 2000*2 + 100*0.5 = 4050, per million
    assert mixed.cost == pytest.approx(0.00805)
    assert (mixed.attempts, mixed.reported, mixed.priced) == (3, 2, 2)
    assert mixed.cost_per_attempt == pytest.approx(0.004025)
    # the mean priced attempt over all three attempts, one bug resolved
    assert mixed.cost_per_resolved == pytest.approx(0.012075)
    assert (mixed.resolved, mixed.wall_time_per_resolved) == (1, 60.0)
    silent = rows["silent"]
    assert (silent.cost, silent.cost_per_attempt, silent.cost_per_resolved) == (None, None, None)
    assert silent.wall_time_per_resolved == 5.0
    odd = rows["odd"]
    assert (odd.price, odd.cost, odd.reported) == (None, None, 1)
    assert report.costs.unpriced == ["weird-model"]
    assert report.costs.cost == pytest.approx(0.00805)

    text = render_markdown(report)
    start = text.index("## How costly")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else len(text)]  # the next section's rows apart
    lines = {line.split("|")[1].strip(): line for line in section.splitlines() if "|" in line}
    assert "not reported" in lines["silent"] and "$0" not in lines["silent"]
    assert "no price" in lines["odd"] and "$0" not in lines["odd"]
    assert "| $0.00805 |" in lines["mixed"] and "| $0.0121 |" in lines["mixed"]
    plain = section.replace("\\", "")
    assert "no price for weird-model: add" in plain and "under `prices:` in bugbout.yaml" in plain


def test_an_agent_without_usage_is_not_reported_never_free() -> None:
    records = _records()
    records["attempts"] = [a for a in records["attempts"] if a.contestant == "silent"]  # type: ignore[attr-defined]
    report = build_report(**records, prices=TABLE)  # type: ignore[arg-type]
    assert report.costs.cost is None
    assert json.loads(report.to_json())["costs"]["cost"] is None
    text = render_markdown(report)
    assert "not reported" in text[text.index("## How costly") :]


def _point(name: str, cost: float | None, rate: float, role: str = "contestant") -> CostRow:
    return CostRow(name=name, role=role, cost_per_resolved=cost, resolve_rate=rate)  # type: ignore[arg-type]


def test_the_front_keeps_what_nothing_beats_on_both_and_every_tie() -> None:
    rows = [
        _point("a", 1.0, 0.5),
        _point("b", 2.0, 0.8),
        _point("c", 2.0, 0.5),  # beaten by a (cheaper) and b (better)
        _point("d", 1.0, 0.5),  # ties a: both stay
        _point("e", 3.0, 0.8),  # as good as b, dearer
        _point("f", 0.5, 0.2),  # the cheapest
        _point("g", None, 1.0),  # no cost: not a point
        _point("h", 0.1, 1.0, role="examiner"),  # not a contestant
    ]
    assert [row.name for row in pareto_front(rows)] == ["a", "b", "d", "f"]


def test_the_report_marks_the_front() -> None:
    report = build_report(**_records(), prices=TABLE)  # type: ignore[arg-type]
    assert {row.name for row in report.costs.agents if row.pareto} == {"mixed"}


# -- prices from bugbout.yaml and the command line reach `bugbout report` ----------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose store holds one bout: ``mixed`` on model ``m-1``."""
    (tmp_path / "bugbout.yaml").write_text(
        "defaults: [base, _self_]\nproject:\n  source: src/calc\n"
        "prices:\n  mine: {model: 'm-*', input: 2, cached-input: 0.5, output: 10}\n"
    )
    records = _records()
    store = Store(tmp_path / ".bugbout")
    tasks = records["tasks"]
    assert isinstance(tasks, TaskSet)
    store.write("tasks.json", tasks)
    store.write("oracles.json", records["oracles"])  # type: ignore[arg-type]
    used = []
    for attempt in records["attempts"]:  # type: ignore[attr-defined]
        if attempt.contestant != "mixed" or attempt.round != 1:
            continue
        path = f"attempts/{attempt.task_id}/{attempt.key}.json"
        store.write(path, attempt)
        used.append(
            JobAttempt(task_id=attempt.task_id, contestant="mixed", path=path, reused=False)
        )
    store.write(
        "resolutions.json",
        ResolutionSet(
            {T1: TaskResolutions(patches={"mixed": PatchResolution(task_id=T1, contestant="mixed",
                                                              score=Score.RESOLVED)})}
        ),
    )  # fmt: skip
    job = Job(judge="majority", auditor="gate", contestants=["mixed"], tasks=tasks,
              attempts=used, started="2026-01-01T00:00:00+00:00")  # fmt: skip
    store.write("job.json", job)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _reported_cost(capsys: pytest.CaptureFixture[str], *overrides: str) -> dict[str, object]:
    assert main(["report", "--format", "json", *overrides]) == 0
    (row,) = json.loads(capsys.readouterr().out)["costs"]["agents"]
    assert isinstance(row, dict)
    return row


def test_prices_from_bugbout_yaml_and_the_command_line_reach_the_report(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # one attempt reported 1000 input and 200 output tokens
    row = _reported_cost(capsys)
    assert (row["price"], row["cost"]) == ("mine", pytest.approx(0.004))
    row = _reported_cost(capsys, "prices.mine.input=4")
    assert row["cost"] == pytest.approx(0.006)
    row = _reported_cost(capsys, "+prices.dear={model: m-1, input: 10, output: 100}")
    assert (row["price"], row["cost"]) == ("dear", pytest.approx(0.03))
