"""Fixes of what the code does in the local time zone: ``astimezone()`` with no zone,
``time.localtime``, ``datetime.now()`` without one, ``time.tzname``, ``mktime``. Their
tests fail before the fix only where the local zone is not UTC. Test runs set no ``TZ``
(a project's ``env`` may), so their zone is this machine's (``/etc/localtime``, UTC when
absent); on a UTC machine such a fix's tests pass before it, and the reason says why."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from bugbout.core.plumbing.trees.git import Git
from bugbout.core.store.records import Task, TestRun
from bugbout.core.truth.no_fail_to_pass import passed

LOCAL_TIME = re.compile(
    r"\.astimezone\(\s*\)|\blocaltime\b|\bmktime\b|\btzname\b|\baltzone\b|\bdaylight\b"
    r"|\bnow\(\s*\)|\bfromtimestamp\([^,()]*\)|\btimezone\.local\b"
)
"""What reads the local time zone, in the code's lines."""
ZONE_FILE = Path("/etc/localtime")


def local_time_note(git: Git, task: Task, before: TestRun, zone_file: Path = ZONE_FILE) -> str:
    """What a no-fail-to-pass reason says when the fix's tests passed ``before`` it, the
    code it changes (its hunks, with their context) reads the local time zone, and that
    zone (``zone_file``'s) is UTC at the fix's date: empty otherwise."""
    if not passed(task, before) or not task.source_files:
        return ""
    line = _reading_line(git, task)
    zone = _utc_name(zone_file, task.date)
    if not line or not zone:
        return ""
    return (
        f"; the code the fix changes reads the local time zone ({line}), and its tests' "
        f"result depends on that zone: the runs set no TZ, so theirs is this machine's, "
        f"{zone}, where the local time is UTC and a fix of what happens elsewhere shows nothing"
    )


def _reading_line(git: Git, task: Task) -> str:
    """The first line of the fix's hunks (changed or beside a change) in its source
    files that reads the local time zone, stripped; empty when none does."""
    diff = git.run(
        "diff", "--no-ext-diff", "--no-color", "--no-renames", "-U3", task.parent, task.sha,
        "--", *(f":(literal){path}" for path in task.source_files),
    )  # fmt: skip
    in_hunk = False
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            in_hunk = False
        elif line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line[:1] in ("+", "-", " ") and LOCAL_TIME.search(line[1:]):
            code = line[1:].strip()
            if not code.startswith("#"):
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
