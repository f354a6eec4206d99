"""Retry rounds (pass@k and each round's gain) and the reasons behind what did not
finish or was not picked, as every reporter shows them."""

from __future__ import annotations

import json
import re

import pytest

from bugbout.core.report.reasons import attempt_reason, one_line
from bugbout.core.report.report import Report
from bugbout.core.report.report_build import build_report
from bugbout.core.report.rounds_report import RoundRow, gain_sentence
from bugbout.core.store.race_records import Attempt, AttemptStatus, Score
from bugbout.core.store.records import Oracle, OracleSet, Task, TaskIssue, TaskSet
from bugbout.core.store.verdict_records import PatchResolution, Verdict
from bugbout.plugins.reporters.html import render_html
from bugbout.plugins.reporters.json import render_json
from bugbout.plugins.reporters.markdown import render_markdown
from bugbout.plugins.reporters.terminal import render_terminal
from bugbout.render.report_sections import sections
from report_records import records

R, W, B, N = Score.RESOLVED, Score.WRONG_FIX, Score.FIXED_BUT_BROKE, Score.NO_FIX
NOT_ON_PATH = (
    "agent 'codex' needs 'codex', which is not on PATH; install it or remove it from "
    "the contestants\nTraceback (most recent call last): ..."
)
ABSTAINED = (
    "abstained: no patch has an independent reproduction (a test by another author that "
    "fails on the unfixed code)"
)


def task(task_id: str) -> Task:
    return Task(
        id=task_id,
        sha=task_id * 4,
        parent=task_id * 4,
        date="2026-01-01T00:00:00+00:00",
        title=f"bug {task_id}",
        issue=TaskIssue(number=1),
        source_files=["src/a.py"],
        test_files=["tests/test_a.py"],
    )


def attempt(
    task_id: str, name: str, round: int = 1, status: AttemptStatus = AttemptStatus.FINISHED
) -> Attempt:
    return Attempt(
        task_id=task_id,
        contestant=name,
        key=f"{task_id}-{name}",
        agent="command",
        status=status,
        round=round,
    )


def bout(
    plan: dict[str, dict[str, list[Score | None]]],
    *,
    verdicts: list[Verdict] | None = None,
    unfinished: list[Attempt] | None = None,
) -> Report:
    """A report on ``plan``: contestant → task → each round's score, the last counted;
    an earlier round's ``None`` was never scored."""
    ids = sorted({task_id for tasks in plan.values() for task_id in tasks})
    attempts, finals, earlier = list(unfinished or []), [], []
    for name, tasks in plan.items():
        for task_id, scores in tasks.items():
            for number, value in enumerate(scores, start=1):
                made = attempt(task_id, name, number)
                attempts.append(made)
                if value is None:
                    continue
                scored = PatchResolution(
                    task_id=task_id, contestant=name, key=made.revision, score=value
                )
                (finals if number == len(scores) else earlier).append(scored)
    for failed in unfinished or []:
        finals.append(
            PatchResolution(task_id=failed.task_id, contestant=failed.contestant, score=N)
        )
    return build_report(
        TaskSet(tasks=[task(task_id) for task_id in ids]),
        OracleSet({t: Oracle(task_id=t, status="ok", fail_to_pass=["t::x"]) for t in ids}),
        attempts,
        finals,
        verdicts or [],
        [],
        [],
        round_scores=earlier,
    )


# -- pass@k ---------------------------------------------------------------------------------

ROUNDS = {
    "alpha": {
        "t1": [R],  # resolved at once
        "t2": [W, R],  # the second round fixes it
        "t3": [W, W, R],  # the third does
        "t4": [R, B],  # resolved first (not approved on visible evidence), then broken
        "t5": [N, N, N],
    },
    "beta": {"t1": [R], "t2": [W], "t3": [W], "t4": [W], "t5": [W]},
}


def test_pass_at_k_against_hand_computed_values() -> None:
    report = bout(ROUNDS)
    alpha, beta = report.rounds.agents
    assert (alpha.contestant, alpha.tasks, alpha.left_out) == ("alpha", 5, 0)
    table = [
        (row.round, row.reached, row.resolved, row.kept, row.new, row.lost, row.gain)
        for row in alpha.rounds
    ]
    assert table == [
        (1, 5, 2, 2, 0, 0, None),  # t1, t4
        (2, 4, 3, 2, 1, 1, 0.2),  # + t2; t4's kept patch no longer resolves it
        (3, 2, 4, 3, 1, 0, 0.2),  # + t3
    ]
    first, second, third = alpha.rounds
    assert first.rate == pytest.approx(0.4)
    assert (first.low, first.high) == (
        pytest.approx(0.1176, abs=1e-4),
        pytest.approx(0.7693, abs=1e-4),
    )
    assert (third.low, third.high) == (
        pytest.approx(0.3755, abs=1e-4),
        pytest.approx(0.9638, abs=1e-4),
    )
    # the gain of one task in five: its exact conditional interval holds 0, as p = 1 says
    # (Clopper-Pearson of 1/1 is 0.025 to 1: (2 * 0.025 - 1) / 5 to 1 / 5)
    assert (second.gain_low, second.gain_high) == (-0.19, 0.2)
    assert second.p_value == 1.0
    # what a bout keeps after its last round is the resolve rate
    assert third.kept == next(row.resolved for row in report.agents if row.contestant == "alpha")
    assert [row.resolved for row in beta.rounds] == [1, 1, 1]
    assert [row.reached for row in beta.rounds] == [5, 0, 0]


def test_a_task_whose_earlier_round_has_no_score_is_left_out() -> None:
    report = bout({"alpha": {"t1": [None, R], "t2": [W, R]}})
    (alpha,) = report.rounds.agents
    assert (alpha.tasks, alpha.left_out) == (1, 1)
    assert "Left out, an earlier round having no score: alpha 1." in render_markdown(report)


def test_one_round_only_has_no_rounds() -> None:
    report = bout({"alpha": {"t1": [R], "t2": [W]}})
    assert report.rounds.agents == []
    assert "one round only: no task was given another round" in render_markdown(report)


# -- a round's sentence, branch by branch ---------------------------------------------------


def test_a_round_that_ran_on_no_task() -> None:
    assert gain_sentence(RoundRow(round=2)) == "No counted task ran round 2."


def test_a_round_that_resolved_nothing_new() -> None:
    row = RoundRow(round=2, reached=3, new=0, gain=0.0, gain_low=0.0, gain_high=0.0, p_value=1.0)
    assert gain_sentence(row) == (
        "Round 2 ran on 3 bugs and resolved none that earlier rounds had not."
    )


def test_a_real_gain_follows_from_the_numbers() -> None:
    """Six of six tasks resolved only by round 2: p = 2/64, below 5%."""
    report = bout({"alpha": {f"t{i}": [W, R] for i in range(6)}})
    second = report.rounds.agents[0].rounds[1]
    assert (second.new, second.p_value) == (6, 0.03125)
    assert second.sentence == (
        "Round 2 resolved 6 bugs that earlier rounds had not: +100% (95% CI +8% to "
        "+100%), a real gain (p = 0.031)."  # 2 * 0.025^(1/6) - 1 = +8%: 0 outside, as p says
    )


def test_a_gain_without_enough_evidence() -> None:
    report = bout({"alpha": {"t1": [W, R], "t2": [W, W], "t3": [R]}})
    second = report.rounds.agents[0].rounds[1]
    assert second.sentence == (
        "Round 2 resolved 1 bug that earlier rounds had not: +33% (95% CI -32% to +33%), "
        "not enough evidence that the round helps (p = 1)."
    )


def test_a_round_that_loses_a_fix_says_so() -> None:
    report = bout({"alpha": {"t1": [R, B], "t2": [W, W]}})
    second = report.rounds.agents[0].rounds[1]
    assert second.sentence == (
        "Round 2 ran on 2 bugs and resolved none that earlier rounds had not. Its patch no "
        "longer resolves 1 bug an earlier round had resolved; the patches kept after 2 "
        "rounds resolve 0 bugs."
    )


# -- reasons, in every reporter -------------------------------------------------------------


@pytest.fixture(scope="module")
def with_reasons() -> Report:
    codex = attempt("t1", "codex", status=AttemptStatus.INFRA_ERROR)
    codex = codex.model_copy(update={"error": NOT_ON_PATH})
    verdicts = [
        Verdict(task_id="t1", policy="majority", pick=None, reason=ABSTAINED),
        Verdict(task_id="t2", policy="majority", pick="alpha", reason="picked 'alpha'"),
    ]
    return bout({"alpha": {"t1": [W], "t2": [R]}}, verdicts=verdicts, unfinished=[codex])


def test_the_reasons_are_recorded(with_reasons: Report) -> None:
    (unfinished,) = with_reasons.reasons.unfinished
    assert (unfinished.task, unfinished.contestant, unfinished.status) == (
        "t1",
        "codex",
        AttemptStatus.INFRA_ERROR,
    )
    assert unfinished.reason == NOT_ON_PATH.splitlines()[0]
    (abstention,) = with_reasons.reasons.abstentions
    assert (abstention.task, abstention.policy) == ("t1", "majority")
    assert abstention.reason == ABSTAINED.removeprefix("abstained: ")


@pytest.mark.parametrize("render", [render_markdown, render_html, render_json, render_terminal])
def test_every_reporter_shows_why(with_reasons: Report, render: object) -> None:
    text = (
        render(with_reasons)
        if render is not render_terminal
        else render_terminal(with_reasons, width=400)
    )
    flat = " ".join(text.split())
    if render is render_json:
        document = json.loads(text)
        flat = json.dumps(document["reasons"])
    assert "which is not on PATH; install it or remove it from the contestants" in flat
    assert "Traceback" not in flat  # one line
    assert "no patch has an independent reproduction" in flat


def test_why_an_attempt_ended_without_an_error() -> None:
    cases = {
        AttemptStatus.TIMEOUT: "stopped at the time limit after 1800s",
        AttemptStatus.QUOTA: "the agent stopped on a usage limit without a patch",
        AttemptStatus.AGENT_ERROR: "the agent exited with code 2 and no message",
        AttemptStatus.INTERRUPTED: "the bout was stopped while it ran",
        AttemptStatus.INFRA_ERROR: "could not run, with no message",
    }
    for status, expected in cases.items():
        made = attempt("t1", "alpha", status=status).model_copy(
            update={"wall_time": 1800.2, "exit_code": 2 if status == "agent-error" else None}
        )
        assert attempt_reason(made) == expected


def test_a_reason_is_one_bounded_line() -> None:
    assert one_line("\n\n  first  \nsecond") == "first"
    cut = one_line("x" * 500)
    assert len(cut) == 200 and cut.endswith("…")


# -- words, not record values; counts, not fractions ----------------------------------------


@pytest.fixture(scope="module")
def full() -> Report:
    return build_report(**records())  # type: ignore[arg-type]


def test_no_fractional_count_anywhere(full: Report) -> None:
    fraction = re.compile(r"^\d[\d,]*\.\d+$")
    for section in sections(full):
        for table in section.tables:
            for row in table.rows:
                assert not any(fraction.match(cell) for cell in row), (section.key, row)
    document = json.loads(render_json(full))
    assert all(isinstance(b["resolved"], int | None) for b in document["picking"].values()
               if isinstance(b, dict))  # fmt: skip


def test_verdicts_and_scores_are_shown_in_words(full: Report) -> None:
    text = render_terminal(full, width=400)  # as written: Markdown escapes underscores
    for raw in (v.value for v in Score if "-" in v.value):  # the records' words, hyphenated
        assert raw not in text, raw
    assert "fixed but broke other tests" in text
    assert re.search(r"fixed but broke other tests +partly fixed +wrong fix +no fix", text)
    assert "timed out 1" in text  # beta's timeout, counted in words


def test_the_attempts_table_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    from bugbout.cli.console import Console

    codex = attempt("t1", "codex", status=AttemptStatus.INFRA_ERROR)
    codex = codex.model_copy(update={"error": "[bold]" + NOT_ON_PATH})
    Console().attempt_table([codex, attempt("t1", "alpha")])
    flat = " ".join(capsys.readouterr().out.split())
    assert (
        "why they did not finish: t1 codex (infra-error): [bold]agent 'codex' needs 'codex', "
        "which is not on PATH; install it or remove it from the contestants"
    ) in flat  # as written, never read as markup
    assert "alpha (finished)" not in flat


def test_the_attempts_run_take_one_line_before_the_report(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The report that follows opens with the decision: the attempts run now are one line
    of counts by status, not a table that fills the first screen."""
    from bugbout.cli.console import Console

    timeout = attempt("t2", "beta", status=AttemptStatus.TIMEOUT)
    Console().attempt_table([attempt("t1", "alpha"), attempt("t2", "alpha"), timeout])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "3 attempts run now: 2 finished, 1 timeout"
    assert lines[1] == "why they did not finish:" and len(lines) == 3
