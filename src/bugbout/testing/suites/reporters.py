"""The conformance suite of reporters."""

from __future__ import annotations

from typing import Any, ClassVar

from bugbout.core.report.report import Report
from bugbout.core.report.report_build import build_report
from bugbout.core.store.race_records import Attempt, AttemptStatus, Audit, Route, Score
from bugbout.core.store.records import Oracle, OracleSet, Outcome, Task, TaskIssue, TaskSet
from bugbout.core.store.verdict_records import SUITE, UNFIXED, Matrix, PatchResolution, Verdict
from bugbout.testing.suites.base import PluginSuite

CONTESTANTS = ("alpha", "beta")
TASKS = ("task-one", "task-two")


def _task(task_id: str, number: int, title: str) -> Task:
    return Task(
        id=task_id,
        sha=f"{number:040x}",
        parent=f"{number + 1000:040x}",
        date="2024-01-01T00:00:00+00:00",
        title=title,
        issue=TaskIssue(number=number, title=title, url=f"https://example.invalid/{number}"),
        problem_statement=f"{title}: it should not.",
        source_files=["src/shapes/area.py"],
        test_files=["tests/test_area.py"],
    )


def _attempt(task_id: str, name: str, role: str = "contestant", **fields: Any) -> Attempt:
    return Attempt.model_validate(
        {
            "task_id": task_id,
            "contestant": name,
            "role": role,
            "key": f"{task_id}-{name}",
            "agent": "command",
            "model": f"{name}-model",
            "status": AttemptStatus.FINISHED,
            "usage": {"input_tokens": 100, "output_tokens": 10},
            "wall_time": 12.5,
            **fields,
        }
    )


def small_report() -> Report:
    """A bout of two tasks (one scored), two contestants, one examiner and one policy; its
    titles hold characters that markup must escape."""
    one, two = TASKS
    alpha, beta = CONTESTANTS
    passed, failed = Outcome.PASSED, Outcome.FAILED
    return build_report(
        tasks=TaskSet(
            examined=9,
            excluded={"not-a-fix": 6, "no-test-added": 1},
            tasks=[
                _task(one, 12, "ratio() crashes on <zero> & | friends *"),
                _task(two, 13, "Typo in a message"),
            ],
        ),
        oracles=OracleSet(
            {
                one: Oracle(task_id=one, status="ok", fail_to_pass=["t::fixed"]),
                two: Oracle(task_id=two, status="no-fail-to-pass"),
            }
        ),
        attempts=[
            _attempt(one, alpha),
            _attempt(one, beta, status=AttemptStatus.TIMEOUT),
            _attempt(one, "exam", role="examiner", examination={"assignment": "reproduce"}),
        ],
        resolutions=[
            PatchResolution(task_id=one, contestant=alpha, score=Score.RESOLVED),
            PatchResolution(task_id=one, contestant=beta, score=Score.WRONG_FIX),
        ],
        verdicts=[
            Verdict(task_id=one, policy="majority", pick=alpha, reason="r", approved=[alpha]),
        ],
        audits=[
            Audit(
                task_id=one,
                contestant=alpha,
                auditor="gate",
                verdict=Score.RESOLVED,
                route=Route.NONE,
            ),
        ],
        matrices=[
            Matrix(
                task_id=one,
                patches=[alpha, beta, UNFIXED],
                authors={"exam": ["e1"], SUITE: ["s1"]},
                outcomes={
                    UNFIXED: {"e1": failed, "s1": passed},
                    alpha: {"e1": passed, "s1": passed},
                    beta: {"e1": failed, "s1": failed},
                },
            )
        ],
    )


class ReporterSuite(PluginSuite):
    """Contract tests for a reporter (``bugbout_reporters``).

    ``render(report)`` returns the report as text for an empty bout as for a real one,
    the same text each time, without changing the report; ``filename`` is ``None``
    (printed) or a plain file name written into the bout's directory.
    """

    kind: ClassVar[str] = "reporter"

    def render(self, plugin: Any, report: Report) -> str:
        text = plugin.render(report)
        assert isinstance(text, str), f"render() returned {type(text).__name__}"
        return text

    def test_names_itself(self, plugin_under_test: Any) -> None:
        assert plugin_under_test.name == self.plugin

    def test_renders_an_empty_report(self, plugin_under_test: Any) -> None:
        assert self.render(plugin_under_test, Report()).strip()

    def test_renders_a_small_report(self, plugin_under_test: Any) -> None:
        text = self.render(plugin_under_test, small_report())
        assert text.strip()

    def test_shows_every_contestant(self, plugin_under_test: Any) -> None:
        text = self.render(plugin_under_test, small_report())
        for name in CONTESTANTS:
            assert name in text, f"the report does not show contestant {name!r}"

    def test_filename_is_none_or_a_plain_file_name(self, plugin_under_test: Any) -> None:
        filename = plugin_under_test.filename
        if filename is None:
            return
        assert isinstance(filename, str)
        assert filename.strip() == filename
        assert filename not in ("", ".", "..")
        assert "/" not in filename
        assert "\\" not in filename
        assert "\0" not in filename

    def test_is_deterministic(self, plugins: Any, plugin_under_test: Any) -> None:
        report = small_report()
        first = self.render(plugin_under_test, report)
        assert self.render(plugin_under_test, report) == first
        assert self.render(plugin_under_test, small_report()) == first
        fresh = plugins.create(self.kind, self.plugin, dict(self.options))
        assert self.render(fresh, report) == first

    def test_does_not_change_the_report(self, plugin_under_test: Any) -> None:
        report = small_report()
        before = report.model_dump()
        self.render(plugin_under_test, report)
        assert report.model_dump() == before
