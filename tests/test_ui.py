"""Progress without a terminal: a line per finished step, and a heartbeat on long ones."""

from __future__ import annotations

import io
import re
import time

from rich.console import Console as RichConsole

from bugbout.cli.console import Console, PlainProgress


def _console() -> tuple[Console, io.StringIO]:
    console = Console()
    stream = io.StringIO()
    console.err = RichConsole(file=stream, highlight=False, soft_wrap=True)
    return console, stream


def test_each_finished_step_is_a_line_with_its_elapsed_time() -> None:
    console, stream = _console()
    progress = PlainProgress(console, heartbeat=60)
    progress.start("racing", total=2)
    progress.advance("codex on t1: finished")
    progress.advance("codex on t2: timeout")
    progress.finish()
    assert stream.getvalue().splitlines() == [
        "racing... (2)",
        "  [1/2 0s] codex on t1: finished",
        "  [2/2 0s] codex on t2: timeout",
    ]


def test_a_long_step_gets_a_heartbeat_naming_the_stage() -> None:
    console, stream = _console()
    progress = PlainProgress(console, heartbeat=0.2)
    progress.start("cross-examining", total=3)
    progress.advance("t1")
    time.sleep(0.9)
    progress.finish()
    lines = stream.getvalue().splitlines()
    beats = [line for line in lines if line.startswith("  still cross-examining: 1 of 3 done")]
    assert 2 <= len(beats) <= 5, lines
    assert all(re.fullmatch(r"  still cross-examining: 1 of 3 done, \ds so far", b) for b in beats)
    time.sleep(0.5)
    assert stream.getvalue().splitlines() == lines, "no heartbeat after the stage finished"


def test_a_quiet_console_prints_no_progress() -> None:
    console, stream = _console()
    console.quiet = True
    with console.progress() as progress:
        progress.start("racing", total=1)
        progress.advance("done")
    assert stream.getvalue() == ""


def test_the_yield_counts_tasks_with_ground_truth_and_why_the_rest_have_none() -> None:
    from bugbout.cli.console import ground_truth_yield
    from bugbout.core.store.records import Oracle, OracleSet, Task, TaskIssue, TaskSet

    def task(sha: str) -> Task:
        return Task(
            id=sha,
            sha=sha,
            parent="p" + sha,
            date="2024-01-01T00:00:00+00:00",
            title="Fix",
            issue=TaskIssue(number=1),
            source_files=[],
            test_files=[],
        )

    tasks = TaskSet(examined=9, tasks=[task(s) for s in ("a", "b", "c", "d", "e")])
    assert ground_truth_yield(tasks, OracleSet()) == ""
    error = "could not install simplejson; set project.test-dependencies"
    oracles = OracleSet(
        {
            "a": Oracle(task_id="a", status="ok"),
            "b": Oracle(task_id="b", status="ok"),
            "c": Oracle(task_id="c", status="no-fail-to-pass"),
            "d": Oracle(task_id="d", status="environment-error", reason=error),
            "e": Oracle(task_id="e", status="environment-error", reason=error),
        }
    )
    assert ground_truth_yield(tasks, oracles).splitlines() == [
        "yield: 2 of 5 tasks have ground truth (40%)",
        "    2  environment-error: could not install simplejson",
        "    1  no-fail-to-pass  (no test the fix added fails before it: nothing to replay; "
        "miner.since or miner.limit find others)",
    ]


def test_the_task_table_shows_the_versions_each_oracle_ran_with() -> None:
    from bugbout.core.store.records import Exemption, Oracle, OracleSet, Task, TaskIssue, TaskSet

    tasks = TaskSet(
        examined=2,
        tasks=[
            Task(
                id=sha,
                sha=sha,
                parent="p",
                date="2019-09-01T00:00:00+00:00",
                title="Fix",
                issue=TaskIssue(number=1),
                source_files=[],
                test_files=[],
            )
            for sha in ("a", "b")
        ],
    )
    exempt = Exemption(
        name="atomicwrites", until="2022-07-09", reason="all releases after the date",
        needed_by="pytest 5.2.0",
    )  # fmt: skip
    versions = {"python": "3.7.16", "pytest": "5.2.0", "pytest-cov": "2.8.1", "six": "1.12.0"}
    oracles = OracleSet({
        "a": Oracle(task_id="a", status="ok", versions=versions, exempt=[exempt], suite=["test"])
    })  # fmt: skip
    console = Console()
    stream = io.StringIO()
    console.out = RichConsole(file=stream, highlight=False, width=200)
    console.task_table(tasks, oracles)
    rows = {line.split()[0]: line for line in stream.getvalue().splitlines() if line.strip()}
    assert "versions" in rows["task"]
    assert (
        rows["a"]
        .rstrip()
        .endswith("ok, tests in test  py3.7.16 pytest 5.2.0 +2; atomicwrites exempt")
    )
    assert rows["b"].split()[-3:] == ["not", "computed", "-"]


def test_a_task_table_without_ground_truth_imports_nothing_of_it() -> None:
    """``bugbout tasks --mine-only``'s table: each task "not computed", and the modules that
    write an oracle's cells are left unimported."""
    import subprocess
    import sys

    script = (
        "import io, sys\n"
        "from rich.console import Console as RichConsole\n"
        "from bugbout.cli.console import Console\n"
        "from bugbout.core.store.records import OracleSet, Task, TaskIssue, TaskSet\n"
        "task = Task(id='a', sha='a', parent='p', date='2024-01-01T00:00:00+00:00',\n"
        "            title='Fix', issue=TaskIssue(number=7), source_files=[], test_files=[])\n"
        "console = Console()\n"
        "console.out = RichConsole(file=io.StringIO(), width=200)\n"
        "console.task_table(TaskSet(examined=3, tasks=[task]), OracleSet())\n"
        "print('not computed' in console.out.file.getvalue())\n"
        "print(sorted(m for m in sys.modules if m.endswith(('.backtrack', '.report_tasks'))))\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert shown == ["True", "[]"]


def test_a_title_is_shown_as_written_not_as_markup() -> None:
    """An issue's title is the reporter's text: ``[/x]`` would stop rich's markup parser,
    ``[bold]`` and ``:smile:`` would be rendered."""
    from bugbout.core.store.records import OracleSet, Task, TaskIssue, TaskSet

    title = "Fix [/x] in [bold]parse[/bold] :smile:"
    task = Task(
        id="a", sha="a", parent="p", date="2024-01-01T00:00:00+00:00",
        title=title, issue=TaskIssue(number=7), source_files=[], test_files=[],
    )  # fmt: skip
    console = Console()
    stream = io.StringIO()
    console.out = RichConsole(file=stream, highlight=False, width=200)
    console.task_table(TaskSet(examined=1, tasks=[task]), OracleSet())
    assert title in stream.getvalue()
