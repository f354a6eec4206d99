"""A fix's tests that pass before it name their own cause in the reason: an assertion
that tests a constant, always true (``assert "error", x == y``), even when the fix is a
merge; and code that reads the local time zone, on a machine whose zone is UTC. Real git,
real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.truth.local_time import LOCAL_TIME, _utc_name
from bugbout.core.truth.unreachable import _constant_asserts, _test_node
from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth

ALWAYS = """\
from calc import ops


def test_half_of_odd():
    assert "error", ops.half(3) == 1.5
"""


@pytest.mark.slow
def test_a_merge_tested_by_a_constant_says_the_test_cannot_fail(tmp_path: Path) -> None:
    """Before the merge ``half`` does not exist, yet the test passes: its assertion tests
    the string; the reason says so, and not that the merge brought its whole branch."""
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\n',
            "src/calc/__init__.py": "",
            "src/calc/ops.py": "def double(x):\n    return x * 2\n",
            "tests/__init__.py": "",
        },
    )
    repo.branch("half")
    repo.commit(
        "Fix half of odd numbers",
        {
            "src/calc/ops.py": "def double(x):\n    return x * 2\n\n\n"
            "def half(x):\n    return x / 2\n",
            "tests/test_half.py": ALWAYS,
        },
    )
    repo.switch("main")
    repo.commit("Document calc", {"README.md": "calc\n"})
    merge = repo.merge("half", "Merge pull request #22 from dev/half\n\nFix half (#21)")
    oracle = ground_truth(calc_settings(repo.path)).root[merge[:12]]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason is not None
    assert oracle.reason.endswith(
        "; tests/test_half.py::test_half_of_odd cannot fail before the fix: its only "
        "assertion (line 5 of tests/test_half.py) tests the constant 'error', always true "
        "(what follows its comma is the message, read only when the assertion fails), on "
        "any Python"
    )


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        (ALWAYS, [5]),
        ("def test_x():\n    assert (f(), 'f works')\n", [2]),  # a tuple
        ("def test_x():\n    assert 1\n    assert b'x', f()\n", [2, 3]),
        ("def test_x():\n    assert 'a', f()\n    assert f() == 2\n", []),  # one checks
        ("def test_x():\n    assert 0, 'never'\n", []),  # always false
        ("def test_x():\n    assert '', f()\n", []),
        ("def test_x():\n    assert ()\n", []),
        ("def test_x():\n    assert None\n", []),
        ("def test_x():\n    f()\n", []),  # no assertion
        ("def test_x():\n    assert 'a'\n    assert_equal(f(), 1)\n", []),
        ("def test_x():\n    with pytest.raises(E):\n        assert 'a'\n", []),
    ],
)
def test_which_assertions_always_hold(source: str, lines: list[int]) -> None:
    name = source.split("def ", 1)[1].split("(", 1)[0]
    scope = _test_node(source.encode(), [name])
    assert scope is not None
    assert [node.lineno for node in _constant_asserts(scope)] == lines


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


@pytest.mark.slow
def test_a_fix_of_the_local_time_zone_says_the_runs_zone_is_utc(tmp_path: Path) -> None:
    """The test fails before the fix only where the local zone is not UTC: on a UTC
    machine the reason names the zone and the line that reads it."""
    if _utc_name(Path("/etc/localtime"), "2025-01-01T00:00:00+00:00") == "":
        pytest.skip("this machine's local time zone is not UTC")
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
        {"src/calc/stamp.py": STAMP_FIXED, "tests/test_stamp.py": STAMP_TEST},
    )
    oracle = ground_truth(calc_settings(repo.path)).root[fix[:12]]
    assert oracle.status == "no-fail-to-pass"
    assert oracle.reason is not None
    assert oracle.reason.endswith(
        "; the code the fix changes reads the local time zone (return moment.astimezone()"
        ".strftime('%H:%M')), and its tests' result depends on that zone: the runs set no "
        f"TZ, so theirs is this machine's, {_utc_name(Path('/etc/localtime'), '2025-01-01')}, "
        "where the local time is UTC and a fix of what happens elsewhere shows nothing"
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
