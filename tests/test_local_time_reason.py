"""A fix of what the code does in a local time zone other than UTC, whose tests pass
before it on a UTC machine: the before tree runs again under another zone, and when the
fix's tests fail there the reason says so, with the line that reads the zone. Real git,
real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.truth.local_time import LOCAL_TIME, _utc_name
from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth

STAMP = """\
from datetime import datetime, timezone


def stamp(moment, utc=False):
    return moment.astimezone().strftime('%H:%M')
"""
STAMP_FIXED = """\
from datetime import datetime, timezone


def stamp(moment, utc=False):
    if utc:
        return moment.strftime('%H:%M')
    return moment.astimezone().strftime('%H:%M')
"""
STAMP_TEST = """\
from datetime import datetime, timezone

from calc.stamp import stamp


def test_utc_stays_utc():
    assert stamp(datetime(2025, 1, 1, 12, 0, tzinfo=timezone.utc), utc=True) == '12:00'
"""


def _fix_of_stamp(tmp_path: Path, test: str) -> str:
    """A history whose second commit fixes ``stamp`` (which reads the local zone) with
    ``test``: the fix's task id."""
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/stamp.py": STAMP,
            "tests/__init__.py": "",
        },
    )
    fix = repo.commit(
        "Fix stamp: keep UTC when asked (#9)",
        {"src/calc/stamp.py": STAMP_FIXED, "tests/test_stamp.py": test},
    )
    return fix[:12]


@pytest.mark.slow
def test_a_fix_of_the_local_time_zone_says_the_runs_zone_is_utc(tmp_path: Path) -> None:
    """The test fails before the fix only where the local zone is not UTC: on a UTC
    machine the before tree runs again under another zone, and the reason says what
    failed there, and the line that reads the zone."""
    zone = _utc_name(Path("/etc/localtime"), "2025-01-01T00:00:00+00:00")
    if not zone:
        pytest.skip("this machine's local time zone is not UTC")
    task = _fix_of_stamp(tmp_path, STAMP_TEST)
    oracle = ground_truth(calc_settings(tmp_path / "repo")).root[task]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason is not None
    assert oracle.reason.endswith(
        "; the code the fix changes reads the local time zone (return moment.astimezone()"
        ".strftime('%H:%M')), and its tests' result depends on that zone: before the fix, "
        "tests/test_stamp.py::test_utc_stays_utc fails with TZ=Asia/Kolkata, and passes in "
        f"this machine's zone, {zone}, the runs' (they set no TZ): a fix of what happens "
        "outside UTC shows nothing here"
    )


@pytest.mark.slow
def test_a_fix_reading_the_zone_whose_tests_pass_in_any_zone_says_nothing_of_it(
    tmp_path: Path,
) -> None:
    """Its test passes before the fix in another zone too: the zone is not the cause."""
    if not _utc_name(Path("/etc/localtime"), "2025-01-01T00:00:00+00:00"):
        pytest.skip("this machine's local time zone is not UTC")
    test = STAMP_TEST.replace("utc=True) == '12:00'", "utc=True) is not None")
    task = _fix_of_stamp(tmp_path, test)
    oracle = ground_truth(calc_settings(tmp_path / "repo")).root[task]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason == (
        "no test failed before the fix and passed after it: the test the fix added or "
        "changed passed before it too: in this environment no test in its history fails "
        "without the fix"
    )


@pytest.mark.parametrize(
    ("line", "reads"),
    [
        ("event[key] = now().astimezone().strftime(fmt)", True),
        ("t = time.localtime(stamp)", True),
        ("return datetime.now()", True),
        ("return datetime.now(tz=timezone.utc)", False),
        ("return moment.astimezone(timezone.utc)", False),
        ("zone = time.tzname[0]", True),
        ("seconds = time.mktime(parts)", True),
        ("datetime.fromtimestamp(ts)", True),
        ("datetime.fromtimestamp(ts, tz=timezone.utc)", False),
        ("return value.strftime(fmt)", False),
    ],
)
def test_which_lines_read_the_local_time_zone(line: str, reads: bool) -> None:
    assert bool(LOCAL_TIME.search(line)) is reads


def test_a_zone_is_utc_only_when_it_keeps_utc_all_year() -> None:
    zones = Path("/usr/share/zoneinfo")
    if not (zones / "Europe/Berlin").exists():
        pytest.skip("no zoneinfo database on this machine")
    assert _utc_name(zones / "Europe/Berlin", "2025-04-25T17:38:03+02:00") == ""
    assert _utc_name(zones / "Etc/UTC", "2025-04-25T17:38:03+02:00") == "Etc/UTC"
    assert _utc_name(zones / "Europe/London", "2025-01-10T00:00:00+00:00") == ""  # summer
