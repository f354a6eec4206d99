"""What the command line shows: one-line messages, progress and tables (rich).

On a terminal, progress is a live bar; with ``--quiet`` or when output is not a
terminal it is a plain line per stage, so logs stay readable.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from rich.console import Console as RichConsole

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID
    from rich.text import Text

    from bugbout.core.contract.manager import RegisteredPlugin
    from bugbout.core.store.race_records import Attempt
    from bugbout.core.store.records import Oracle, OracleSet, TaskSet


class Console:
    """The CLI's output: stdout for results, stderr for messages and progress."""

    def __init__(self, *, quiet: bool = False) -> None:
        self.quiet = quiet
        self.out = RichConsole(highlight=False, soft_wrap=True)
        self.err = RichConsole(stderr=True, highlight=False, soft_wrap=True)

    def __reduce__(self) -> tuple[Callable[[], Console], tuple[()]]:
        """A sweep launcher (joblib, Ray, submitit) sends each job to another process,
        where it gets a console of its own."""
        return functools.partial(Console, quiet=self.quiet), ()

    def info(self, message: str) -> None:
        if not self.quiet:
            self.err.print(message, markup=False)

    def warn(self, message: str) -> None:
        self.err.print(f"warning: {message}", markup=False, style="yellow")

    def error(self, message: str) -> None:
        self.err.print(f"error: {message}", markup=False, style="bold red")

    @contextlib.contextmanager
    def progress(self) -> Iterator[StageProgress | PlainProgress]:
        if self.quiet or not self.err.is_terminal:
            plain = PlainProgress(self)
            try:
                yield plain
            finally:
                plain.finish()
            return
        from rich.progress import (  # only a live bar needs it
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}", style="dim"),
            TimeElapsedColumn(),
            console=self.err,
            transient=False,
        )
        with bar:
            yield StageProgress(bar, self)

    def plugin_table(self, plugins: list[RegisteredPlugin]) -> None:
        from rich.table import Table

        table = Table("kind", "name", "distribution", "description", box=None)
        for plugin in plugins:
            table.add_row(
                *_plain(plugin.kind, plugin.name, plugin.distribution, plugin.spec.description)
            )
        self.out.print(table)

    def task_table(self, tasks: TaskSet, oracles: OracleSet) -> None:
        from rich.table import Table

        excluded = ", ".join(
            f"{reason} {count}" for reason, count in sorted(tasks.excluded.items())
        )
        table = Table(
            "task", "issue", "title", "F2P", "P2P", "unstable", "ground truth", "versions",
            title=f"{len(tasks.tasks)} tasks from {tasks.examined} commits",
            caption=f"left out: {excluded}" if excluded else None,
            box=None,
        )  # fmt: skip
        for task in tasks.tasks:
            oracle = oracles.root.get(task.id)
            table.add_row(
                *_plain(
                    task.id,
                    f"#{task.issue.number}" if task.issue.number else task.tier,
                    task.title[:60],
                    *(_oracle_cells(oracle) if oracle else ("-", "-", "-", "not computed", "-")),
                )
            )
        self.out.print(table)
        summary = ground_truth_yield(tasks, oracles)
        if summary:
            self.out.print(summary, markup=False, highlight=False)

    def attempt_table(self, attempts: list[Attempt]) -> None:
        """The attempts run now in one line, by status (the report that follows opens
        with the decision; each attempt is on its task's page), then why each that did
        not finish stopped."""
        from bugbout.core.report.reasons import attempt_reason
        from bugbout.core.store.race_records import AttemptStatus

        if not attempts:
            self.out.print("no new attempts: every contestant has finished every task")
            return
        counts = Counter(attempt.status.value for attempt in attempts)
        statuses = ", ".join(f"{count} {status}" for status, count in counts.most_common())
        self.out.print(f"{len(attempts)} attempts run now: {statuses}", highlight=False)
        unfinished = [a for a in attempts if a.status != AttemptStatus.FINISHED]
        if unfinished:
            self.out.print("why they did not finish:")
        for attempt in sorted(unfinished, key=lambda a: (a.task_id, a.contestant)):
            self.out.print(
                f"  {attempt.task_id} {attempt.contestant} ({attempt.status.value}): "
                f"{attempt_reason(attempt)}",
                markup=False,
                highlight=False,
            )


class StageProgress:
    """Progress shown as a live bar per stage."""

    def __init__(self, bar: Progress, console: Console) -> None:
        self.bar = bar
        self.console = console
        self.current: TaskID | None = None

    def start(self, description: str, total: int | None = None) -> None:
        self.current = self.bar.add_task(description, total=total, detail="")

    def advance(self, detail: str = "") -> None:
        if self.current is not None:
            self.bar.update(self.current, advance=1, detail=detail)

    def finish(self) -> None:
        if self.current is not None:
            task = self.bar.tasks[self.current]
            self.bar.update(self.current, total=task.completed or 1, completed=task.completed or 1)
            self.current = None

    def warn(self, message: str) -> None:
        self.console.warn(message)


HEARTBEAT = 30.0
"""Seconds of silence after which plain progress says it is still at work."""


class PlainProgress:
    """Progress as plain lines (no terminal, or ``--quiet``): one when a stage starts, one
    per finished step with its elapsed time, and a heartbeat every ``heartbeat`` seconds
    of a step that goes on, so a log under CI or nohup never sits silent."""

    def __init__(self, console: Console, *, heartbeat: float = HEARTBEAT) -> None:
        self.console = console
        self.heartbeat = heartbeat
        self.done = 0
        self.total: int | None = None
        self.description = ""
        self.started = self.last = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def start(self, description: str, total: int | None = None) -> None:
        self.finish()
        with self._lock:
            self.done, self.total, self.description = 0, total, description
            self.started = self.last = time.monotonic()
        self.console.info(f"{description}..." + (f" ({total})" if total is not None else ""))
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._beating, args=(self._stop,), daemon=True)
        self._beat.start()

    def advance(self, detail: str = "") -> None:
        with self._lock:
            self.done += 1
            self.last = time.monotonic()
            count = f"{self.done}/{self.total}" if self.total is not None else str(self.done)
            line = f"  [{count} {_elapsed(self.last - self.started)}] {detail}".rstrip()
        self.console.info(line)

    def finish(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
            self._beat = None

    def warn(self, message: str) -> None:
        self.console.warn(message)

    def _beating(self, stop: threading.Event) -> None:
        while not stop.wait(self.heartbeat):
            with self._lock:
                now = time.monotonic()
                if now - self.last < self.heartbeat:
                    continue
                self.last = now
                done = f"{self.done} of {self.total}" if self.total is not None else self.done
                line = (
                    f"  still {self.description}: {done} done, "
                    f"{_elapsed(now - self.started)} so far"
                )
            self.console.info(line)


def _elapsed(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


YIELD_FIXES = {
    "no-fail-to-pass": (
        "no test the fix added fails before it: nothing to replay; miner.since or "
        "miner.limit find others"
    ),
    "environment-error": "the reason is in `bugbout tasks` warnings and oracles.json",
}
"""What to do about each way a mined task can end without ground truth."""


def _yield_by_tier(tasks: TaskSet, oracles: OracleSet) -> list[str]:
    """The yield of each tier, one line, when the tasks are of more than one."""
    tiers: dict[str, list[int]] = {}
    for task in tasks.tasks:
        oracle = oracles.root.get(task.id)
        counts = tiers.setdefault(task.tier, [0, 0])
        counts[0] += oracle is not None and oracle.status == "ok"
        counts[1] += 1
    if len(tiers) < 2:
        return []
    shown = ", ".join(
        f"{tier} {good} of {total} ({round(100 * good / total)}%)"
        for tier, (good, total) in sorted(tiers.items())
    )
    return [f"  by tier: {shown}"]


def _plain(*cells: str) -> list[Text]:
    """Cells shown as written: a title or a plugin's description is not rich markup (a
    ``[/x]`` in an issue's title would stop the command) nor emoji codes."""
    from rich.text import Text

    return [Text(cell) for cell in cells]


def _oracle_cells(oracle: Oracle) -> tuple[str, ...]:
    """A task table's cells of what ground truth found: its tests, its status, its versions
    (the modules that write them are imported only when a task has an oracle)."""
    from bugbout.core.plumbing.environments.backtrack import compact
    from bugbout.core.store.records import suite_note

    return (
        str(len(oracle.fail_to_pass)),
        str(len(oracle.pass_to_pass)),
        str(len(oracle.unstable)),
        suite_note(oracle.status, oracle.suite),
        compact(oracle.versions, oracle.exempt),
    )


def ground_truth_yield(tasks: TaskSet, oracles: OracleSet) -> str:
    """How many mined tasks got ground truth, and why the others did not (most common
    first, each with what to do); empty before any ground truth is computed."""
    computed = [oracles.root[task.id] for task in tasks.tasks if task.id in oracles.root]
    if not computed:
        return ""
    good = sum(1 for oracle in computed if oracle.status == "ok")
    lines = [
        f"yield: {good} of {len(tasks.tasks)} tasks have ground truth "
        f"({round(100 * good / len(tasks.tasks))}%)",
        *_yield_by_tier(tasks, oracles),
    ]
    reasons: dict[str, int] = {}
    for oracle in computed:
        if oracle.status != "ok":
            why: str = oracle.status
            if oracle.status == "environment-error" and oracle.reason:
                why = f"{oracle.status}: {oracle.reason.split(';')[0][:100]}"
            reasons[why] = reasons.get(why, 0) + 1
    for why, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
        fix = YIELD_FIXES.get(why.split(":")[0], "")
        lines.append(f"  {count:>3}  {why}" + (f"  ({fix})" if fix and ":" not in why else ""))
    return "\n".join(lines)
