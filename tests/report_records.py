"""The hand-made bout the report tests read, and the checks of JSON and HTML they share.

It has three scored-or-not tasks, three contestants (alpha, beta, gamma) and one examiner
(exam):

======  ===============  ================================  =====================
task    alpha            beta                              gamma
======  ===============  ================================  =====================
T1      resolved         fixed-but-broke (timed out)       wrong-fix
T2      wrong-fix (2     resolved                          quota (left out)
        rounds)
T3      not scored: its ground truth has no fail-to-pass test
======  ===============  ================================  =====================
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from bugbout.core.report.report import report_schema
from bugbout.core.store.race_records import Attempt, AttemptStatus, Audit, Patch, Route, Score
from bugbout.core.store.records import Oracle, OracleSet, Outcome, Task, TaskIssue, TaskSet, TestRun
from bugbout.core.store.verdict_records import SUITE, UNFIXED, Matrix, PatchResolution, Verdict

P, F, E = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR
T1, T2, T3 = "aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"
A, B = "alpha", "beta"
HOSTILE_TITLE = 'Crash on <script>alert("x")</script> & <b>bold</b> | pipe'
HOSTILE_STATEMENT = "Steps:\n\n    parse('<img src=x onerror=alert(1)>')\n\n</pre></details>"


def task(task_id: str, number: int, title: str, statement: str = "") -> Task:
    return Task(
        id=task_id,
        sha=task_id * 3 + "0000",
        parent=task_id * 3 + "1111",
        date="2026-01-01T00:00:00+00:00",
        title=title,
        issue=TaskIssue(number=number, title=title, url=f"https://example.invalid/{number}"),
        problem_statement=statement,
        source_files=["src/calc/core.py"],
        test_files=["tests/test_core.py"],
    )


def attempt(  # noqa: PLR0917
    task_id: str,
    name: str,
    usage: dict[str, int],
    wall: float,
    status: AttemptStatus = AttemptStatus.FINISHED,
    round: int = 1,
    role: str = "contestant",
) -> Attempt:
    return Attempt(
        task_id=task_id,
        contestant=name,
        role=role,
        key=f"{task_id}-{name}-{round}",
        agent="command",
        model=f"{name}-model",
        status=status,
        usage=usage,
        wall_time=wall,
        round=round,
    )


def audit(task_id: str, name: str, verdict: Score, *, visible: bool = False) -> Audit:
    return Audit(
        task_id=task_id,
        contestant=name,
        auditor="gate",
        verdict=verdict,
        route=Route.NONE,
        visible_only=visible,
    )


ERA = (
    "uv: Python 3.7.16, deps as of 2019-10-01; atomicwrites exempt (all releases after the "
    "date), pytest 5.2.0 instead of 3.5.1"
)


def records() -> dict[str, object]:
    tasks = TaskSet(
        examined=40,
        excluded={"not a fix": 7, "no test added": 30},
        tasks=[
            task(T1, 11, HOSTILE_TITLE, HOSTILE_STATEMENT),
            task(T2, 12, "Wrong total when empty", "The total of [] is None, not 0."),
            task(T3, 13, "Typo in a message"),
        ],
    )
    oracles = OracleSet(
        {
            T1: Oracle(
                task_id=T1,
                status="ok",
                fail_to_pass=["t::a"],
                environment=ERA,
                versions={"python": "3.7.16", "pytest": "5.2.0", "six": "1.12.0"},
            ),
            T2: Oracle(task_id=T2, status="ok", fail_to_pass=["t::b"]),
            T3: Oracle(task_id=T3, status="no-fail-to-pass"),
        }
    )
    attempts = [
        attempt(T1, "alpha", {"input_tokens": 100, "output_tokens": 50}, 10),
        attempt(T2, "alpha", {"input_tokens": 200, "output_tokens": 100}, 20),
        attempt(T2, "alpha", {"input_tokens": 300, "output_tokens": 10}, 30, round=2),
        attempt(T1, "beta", {"input_tokens": 1000}, 1800, AttemptStatus.TIMEOUT),
        attempt(T2, "beta", {"input_tokens": 500, "output_tokens": 500}, 100),
        attempt(T1, "gamma", {"input_tokens": 10}, 5),
        attempt(T2, "gamma", {}, 1, AttemptStatus.QUOTA),
        attempt(T1, "exam", {"input_tokens": 40, "output_tokens": 2}, 7, role="examiner"),
        attempt(T2, "exam", {"input_tokens": 60}, 3, role="examiner"),
    ]
    resolutions = [
        PatchResolution(task_id=T1, contestant="alpha", score=Score.RESOLVED),
        PatchResolution(task_id=T1, contestant="beta", score=Score.FIXED_BUT_BROKE),
        PatchResolution(task_id=T1, contestant="gamma", score=Score.WRONG_FIX),
        PatchResolution(task_id=T2, contestant="alpha", score=Score.WRONG_FIX),
        PatchResolution(task_id=T2, contestant="beta", score=Score.RESOLVED),
        # a quota failure is not the agent's doing: left out
        PatchResolution(task_id=T2, contestant="gamma", score=Score.NO_FIX),
        # T3 is not scored: ignored
        PatchResolution(task_id=T3, contestant="alpha", score=Score.RESOLVED),
    ]
    verdicts = [
        Verdict(task_id=T1, policy="majority", pick="alpha", reason="r", approved=[A, B]),
        Verdict(task_id=T2, policy="majority", pick="alpha", reason="r", approved=[A, B]),
        Verdict(task_id=T1, policy="unanimous", pick="alpha", reason="r", approved=["alpha"]),
        Verdict(task_id=T2, policy="unanimous", pick=None, reason="r", approved=[]),
        Verdict(task_id=T1, policy="strict", pick=None, reason="r", approved=[]),
        Verdict(task_id=T2, policy="strict", pick="gamma", reason="r", approved=["gamma"]),
        Verdict(task_id=T3, policy="majority", pick="alpha", reason="r", approved=["alpha"]),
    ]  # fmt: skip
    audits = [
        audit(T1, "alpha", Score.RESOLVED),
        audit(T2, "alpha", Score.WRONG_FIX, visible=True),
        audit(T2, "alpha", Score.PARTLY_FIXED),
        audit(T1, "beta", Score.FIXED_BUT_BROKE),
        audit(T2, "beta", Score.RESOLVED),
        audit(T1, "gamma", Score.RESOLVED),  # wrong: the score says wrong-fix
        audit(T2, "gamma", Score.NO_FIX),  # its score does not count
    ]
    matrices = [
        Matrix(
            task_id=T1,
            patches=["alpha", "beta", "gamma", UNFIXED],
            authors={
                "alpha": ["a1"],
                "beta": ["b1"],
                "gamma": ["g1"],
                "exam": ["e1", "e2"],
                SUITE: ["s1", "s2", "s3"],
            },
            outcomes={
                UNFIXED: {"a1": F, "b1": F, "g1": P, "e1": F, "e2": P, "s1": P, "s2": P, "s3": F},
                "alpha": {"a1": P, "b1": P, "g1": F, "e1": P, "e2": P, "s1": P, "s2": P, "s3": F},
                "beta": {"a1": P, "b1": P, "g1": P, "e1": P, "e2": F, "s1": E, "s2": P, "s3": F},
                "gamma": {"a1": F, "b1": P, "g1": P, "e1": F, "e2": P, "s1": P, "s2": P, "s3": F},
            },
        ),
        Matrix(
            task_id=T2,
            patches=["alpha", "beta", UNFIXED],
            authors={"alpha": ["a2"], "beta": ["b2"], "exam": ["e3"], SUITE: ["s1", "s2"]},
            outcomes={
                UNFIXED: {"a2": F, "b2": F, "e3": F, "s1": P, "s2": P},
                "alpha": {"a2": P, "b2": F, "e3": F, "s1": P, "s2": P},
                "beta": {"a2": P, "b2": P, "s1": P, "s2": P},  # e3 did not run
            },
        ),
    ]
    return {
        "tasks": tasks,
        "oracles": oracles,
        "attempts": attempts,
        "resolutions": resolutions,
        "verdicts": verdicts,
        "audits": audits,
        "matrices": matrices,
    }


def _validate(document: object) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(document)


class _Elements(HTMLParser):
    """Every element's tag and attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))


HOSTILE_PATCH = (
    "diff --git a/src/calc/core.py b/src/calc/core.py\n"
    "--- a/src/calc/core.py\n+++ b/src/calc/core.py\n@@ -1,2 +1,2 @@\n"
    " def total(items):\n"
    "-    return None  # </pre><script>alert(1)</script>\n"
    "+    return sum(items) if items else 0\n"
)


def evidence_records() -> dict[str, object]:
    """The bout above with evidence to show: a patch with hostile text, a timed-out
    attempt with its error, and a regression with its first error line."""
    data = records()
    attempts = data["attempts"]
    assert isinstance(attempts, list)
    for index, one in enumerate(attempts):
        if (one.task_id, one.contestant) == (T1, "alpha"):
            attempts[index] = one.model_copy(update={"patch": Patch(source=HOSTILE_PATCH)})
        if (one.task_id, one.contestant) == (T1, "beta"):
            error = "no answer after 1800 s\nTraceback (most recent call last): ..."
            attempts[index] = one.model_copy(update={"error": error})
    resolutions = data["resolutions"]
    assert isinstance(resolutions, list)
    run = TestRun(
        label="hidden", status="ok", outcomes={"s1": E}, failures={"s1": "KeyError: '<b>x'"}
    )
    resolutions[1] = resolutions[1].model_copy(update={"run": run})
    audits = data["audits"]
    assert isinstance(audits, list)
    audits[3] = audits[3].model_copy(update={"regressions": ["s1"]})
    return data
