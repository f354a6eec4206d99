"""Fixes of what the code does in the local time zone: ``astimezone()`` with no zone,
``time.localtime``, ``datetime.now()`` without one, ``time.tzname``, ``mktime``. Their
tests may fail before the fix only where the local zone is not UTC. Test runs set no
``TZ`` (a project's ``env`` may), so their zone is this machine's (``/etc/localtime``,
UTC when absent). On a UTC machine, when such a fix's tests pass before it, the before
tree runs once more under another zone: when they fail there, the reason says so."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.plumbing.environments.environment import Environment
from bugbout.core.plumbing.testruns.test_runner import TestRunner, TestRunRequest
from bugbout.core.plumbing.trees.built_files import export_built
from bugbout.core.plumbing.trees.checkout import remove_later
from bugbout.core.plumbing.trees.git import Git, diff_lines
from bugbout.core.plumbing.trees.tree_files import install_fix_tests
from bugbout.core.store.records import Task, TestRun
from bugbout.core.truth.no_fail_to_pass import FAILING, passed

LOCAL_TIME = re.compile(
    r"\.astimezone\(\s*\)|\blocaltime\b|\bmktime\b|\btzname\b|\baltzone\b|\bdaylight\b"
    r"|\bnow\(\s*\)|\bfromtimestamp\([^,()]*\)|\btimezone\.local\b"
)
"""What reads the local time zone, in the code's lines."""
ZONE_FILE = Path("/etc/localtime")
ELSEWHERE = "Asia/Kolkata"
"""The zone the before tree runs in again: UTC+05:30 all year, never UTC's time."""


@dataclass(frozen=True)
class ZoneRerun:
    """The before tree (the fix's parent with its tests) run once more, in ``environment``
    as ground truth ran it, with ``TZ`` set to the zone it is called with."""

    git: Git
    task: Task
    environment: Environment
    runner: TestRunner
    project: ProjectSettings
    timeout: float
    confine: Confine
    work: Path
    """Where the tree is exported (and removed from later)."""

    def __call__(self, zone: str) -> TestRun:
        tree = Path(tempfile.mkdtemp(prefix=f"{self.task.id}-zone-", dir=self.work)) / "tree"
        try:
            export_built(self.git, self.task.parent, tree)
            install_fix_tests(self.task, self.git, tree)
            return self.runner.run(
                TestRunRequest(
                    environment=self.environment,
                    tree=tree,
                    targets=tuple(self.task.test_files),
                    project=self.project.model_copy(
                        update={"env": {**self.project.env, "TZ": zone}}
                    ),
                    label=f"before-tz-{zone}",
                    timeout=self.timeout,
                    confine=self.confine,
                    hostile=False,
                )
            )
        finally:
            remove_later(tree.parent, self.work)


def local_time_note(
    git: Git,
    task: Task,
    before: TestRun,
    rerun: Callable[[str], TestRun],
    zone_file: Path = ZONE_FILE,
) -> str:
    """What a no-fail-to-pass reason says when the fix's tests passed ``before`` it, the
    code it changes (its hunks, with their context) reads the local time zone, that zone
    (``zone_file``'s) is UTC at the fix's date, and the before tree run again by
    ``rerun`` in another zone fails a test the fix added or changed: empty otherwise."""
    if not passed(task, before) or not task.source_files:
        return ""
    line = _reading_line(git, task)
    zone = _utc_name(zone_file, task.date) if line else ""
    if not zone:
        return ""
    named = {*task.added_tests, *task.modified_tests}
    elsewhere = rerun(ELSEWHERE)
    failed = [
        test
        for test, outcome in elsewhere.outcomes.items()
        if test.split("[", 1)[0] in named and outcome in FAILING
    ]
    if not failed:
        return ""
    more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
    return (
        f"; the code the fix changes reads the local time zone ({line}), and its tests' "
        f"result depends on that zone: before the fix, {failed[0]}{more} fails with "
        f"TZ={ELSEWHERE}, and passes in this machine's zone, {zone}, the runs' (they set no "
        "TZ): a fix of what happens outside UTC shows nothing here"
    )


def _reading_line(git: Git, task: Task) -> str:
    """The first line of the fix's hunks (changed or beside a change) in its source
    files that reads the local time zone, stripped; empty when none does."""
    diff = git.run(
        "diff", "--no-ext-diff", "--no-color", "--no-renames", "-U3", task.parent, task.sha,
        "--", *(f":(literal){path}" for path in task.source_files),
    )  # fmt: skip
    for line in diff_lines(diff, context=True):
        code = line[1:].strip()
        if LOCAL_TIME.search(code) and not code.startswith("#"):
            return code[:80]
    return ""


def _utc_name(zone_file: Path, date: str) -> str:
    """The name of the zone ``zone_file`` holds (``Etc/UTC``), when it keeps UTC's time
    at ``date`` and half a year on; empty otherwise. No file is UTC."""
    if not zone_file.exists():
        return "UTC (no /etc/localtime)"
    try:
        with zone_file.open("rb") as stream:
            zone = ZoneInfo.from_file(stream)
    except (OSError, ValueError):
        return ""
    moment = datetime.fromisoformat(date).replace(tzinfo=None)
    for when in (moment, moment + timedelta(days=182)):
        if zone.utcoffset(when) != timedelta(0):
            return ""
    target = str(zone_file.resolve())
    return target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else str(zone_file)
