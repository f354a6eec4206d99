"""The Python API as an application meets it: paths as strings, progress through a
callback, messages through the standard ``logging`` module and a log per bout."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bugbout import Bout, ProgressEvent


@pytest.mark.slow
def test_a_bout_from_string_paths_reports_progress_and_logs(
    bout_repo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[ProgressEvent] = []
    output = tmp_path / "out"
    with caplog.at_level(logging.INFO, logger="bugbout"):
        result = Bout(str(bout_repo), progress=events.append, output=str(output)).run()
    assert result.report is not None
    assert (output / "report.json").is_file()
    started = [event.description for event in events if event.kind == "start"]
    assert started, events
    finished = [event for event in events if event.kind == "finish"]
    assert finished and all(event.description in started for event in finished)
    steps = [event for event in events if event.kind == "advance"]
    assert steps and all(0 < event.done <= (event.total or event.done) for event in steps)
    logged = [record.getMessage() for record in caplog.records if record.name == "bugbout"]
    assert any(message.startswith(started[0]) for message in logged), logged
    log = (output / "bout.log").read_text(encoding="utf-8")
    assert started[0] in log and " INFO " in log


@pytest.mark.slow
def test_a_bouts_log_leaves_the_applications_logging_as_it_set_it(
    bout_repo: Path, tmp_path: Path
) -> None:
    """An application that logs at WARNING sees no INFO line of bugbout's while a bout
    runs, and the bout still writes its INFO lines to its own log."""
    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = seen.append  # type: ignore[method-assign]
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    try:
        Bout(str(bout_repo), output=str(tmp_path / "out")).run()
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    assert not [r for r in seen if r.name.startswith("bugbout") and r.levelno < logging.WARNING]
    assert " INFO " in (tmp_path / "out" / "bout.log").read_text(encoding="utf-8")
