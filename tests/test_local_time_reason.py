"""A fix of what the code does in a local time zone other than UTC, whose tests pass
before it on a UTC machine: the before tree runs again under another zone, and when the
fix's tests fail there the reason says so, with the line that reads the zone. Real git,
real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.truth.local_time import LOCAL_TIME, _utc_name


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
