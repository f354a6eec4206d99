"""What a JavaScript runner's reporter sent through bugbout's signed channel, and the run
it makes.

The reporters (``*_reporter.mjs``, with ``channel.mjs``) run in the runner's main process
and write one JSON record a line, each signed (HMAC-SHA256) with a key only that process
read: ``{"start": pid}`` when loaded, ``{"test": [file, [titles...]], "outcome": ...,
"message": ...}`` per test, ``{"file": path, "error": ...}`` for a file whose tests never
reported (``"ended": true`` when its process ended as if it had finished),
``{"unhandled": ...}`` for errors outside any test, then ``{"end": {"tests": n, ...}}``:
the reporter's own tally. Tests of one file with the same title path (Vitest and Jest
allow it) share their id, which has the worst of their outcomes. A line whose signature
does not hold, a tally that disagrees with the lines, or a run that never reached its
tally is not the runner's word.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field

from bugbout.test_runners import SEPARATOR, Outcome

TITLES = " > "
"""Between the titles of a test's suites and its own, in its id."""

OUTCOMES = {"passed": Outcome.PASSED, "failed": Outcome.FAILED, "skipped": Outcome.SKIPPED}
RANK = (Outcome.FAILED, Outcome.PASSED, Outcome.SKIPPED)
"""A title path a file repeats (two tests of one name) has its worst outcome."""
MESSAGE_LIMIT = 500


@dataclass
class RunReport:
    """The records of one run, read and checked."""

    started: bool = False
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    file_errors: dict[str, str] = field(default_factory=dict)
    ended_early: list[str] = field(default_factory=list)
    """Files whose process ended before reporting their tests, as if it had finished."""
    unhandled: list[str] = field(default_factory=list)
    tally: int | None = None
    forged: int = 0
    """Lines whose signature did not hold."""
    sent: int = 0
    """Test lines received: more than the ids when a file repeats a title path."""

    @property
    def problems(self) -> list[str]:
        """Why the run's outcomes are not the runner's word (empty: they are)."""
        found = []
        if self.forged:
            found.append(f"{self.forged} outcome lines were not signed by bugbout's reporter")
        if self.tally is not None and self.tally != self.sent:
            found.append(f"the reporter counted {self.tally} tests but sent {self.sent}")
        ended = "ended its test process as if it had finished"
        found += [f"{path} {ended}" for path in self.ended_early]
        return found


def test_id(file: str, titles: list[str]) -> str:
    """A test's id: its file, ``::``, its titles joined by ``" > "``."""
    return f"{file}{SEPARATOR}{TITLES.join(titles)}"


def signed(key: str, record: dict[str, object]) -> bytes:
    """``record`` as the channel writes it (for tests of the reader)."""
    text = json.dumps(record, separators=(",", ":"))
    mac = hmac.new(key.encode(), text.encode(), hashlib.sha256).hexdigest()
    return f"{mac} {text}\n".encode()


def read_report(written: bytes, key: str) -> RunReport:
    """The checked records of ``written`` (the channel's bytes), signed with ``key``."""
    report = RunReport()
    for raw in written.splitlines():
        record = _verified(raw, key.encode())
        if record is None:
            report.forged += raw.strip() != b""
            continue
        _take(report, record)
    return report


def _verified(raw: bytes, key: bytes) -> dict[str, object] | None:
    mac, _, text = raw.partition(b" ")
    expected = hmac.new(key, text, hashlib.sha256).hexdigest().encode()
    if not text or not hmac.compare_digest(mac, expected):
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _take(report: RunReport, record: dict[str, object]) -> None:
    if "start" in record:
        report.started = True
    elif "test" in record:
        named = record["test"]
        if not isinstance(named, list) or len(named) != 2 or not isinstance(named[1], list):
            report.forged += 1
            return
        test = test_id(str(named[0]), [str(title) for title in named[1]])
        report.sent += 1
        outcome = OUTCOMES.get(str(record.get("outcome")), Outcome.FAILED)
        report.outcomes[test] = min(outcome, report.outcomes.get(test, outcome), key=RANK.index)
        text = str(record.get("message") or "")[:MESSAGE_LIMIT]
        if outcome == Outcome.FAILED and test not in report.failures:
            report.failures[test] = text or "failed"
    elif "file" in record:
        path = str(record["file"])
        if record.get("ended"):
            report.ended_early.append(path)
        else:
            report.file_errors[path] = str(record.get("error") or "failed")[:MESSAGE_LIMIT]
    elif "unhandled" in record:
        report.unhandled.append(str(record["unhandled"])[:MESSAGE_LIMIT])
    elif "end" in record:
        tally = record["end"]
        report.tally = int(tally.get("tests", 0)) if isinstance(tally, dict) else 0
