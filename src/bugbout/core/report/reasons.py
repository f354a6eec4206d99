"""Why, in words: each attempt that did not finish with its one-line reason, each judge
abstention with the judge's own reason, and the words every text report uses for an
attempt's status, a patch's score and an audit's verdict (never the raw record value)."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field

from bugbout.core.store.race_records import Attempt, AttemptStatus, Score
from bugbout.core.store.records import Record
from bugbout.core.store.verdict_records import Verdict

STATUS_WORDS = {
    AttemptStatus.FINISHED: "finished",
    AttemptStatus.TIMEOUT: "timed out",
    AttemptStatus.QUOTA: "hit a usage limit",
    AttemptStatus.AGENT_ERROR: "the agent failed",
    AttemptStatus.INFRA_ERROR: "could not run",
    AttemptStatus.INTERRUPTED: "interrupted",
}
"""How an attempt ended, as the reports say it."""

SCORE_WORDS = {
    Score.RESOLVED: "resolved",
    Score.FIXED_BUT_BROKE: "fixed but broke other tests",
    Score.PARTLY_FIXED: "partly fixed",
    Score.WRONG_FIX: "wrong fix",
    Score.NO_FIX: "no fix",
    Score.TAMPERED: "tampered with the tests",
}
"""A patch's score against the hidden tests, or an auditor's verdict on it, as the
reports say it."""

LIMIT = 200
"""The most characters of a reason a report shows."""
ABSTAINED = "abstained: "
"""How a judge's reason for an abstention starts (left out of the report's reason)."""


def one_line(text: str, limit: int = LIMIT) -> str:
    """The first non-blank line of ``text``, cut to ``limit`` characters."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def attempt_reason(attempt: Attempt) -> str:
    """Why ``attempt`` did not finish, in one line: its error, else what its status and
    figures say."""
    found = one_line(attempt.error or "")
    if found:
        return found
    match attempt.status:
        case AttemptStatus.TIMEOUT:
            return f"stopped at the time limit after {attempt.wall_time:.0f}s"
        case AttemptStatus.QUOTA:
            return "the agent stopped on a usage limit without a patch"
        case AttemptStatus.AGENT_ERROR if attempt.exit_code is not None:
            return f"the agent exited with code {attempt.exit_code} and no message"
        case AttemptStatus.INTERRUPTED:
            return "the bout was stopped while it ran"
        case _:
            return f"{STATUS_WORDS[attempt.status]}, with no message"


def abstention_reason(verdict: Verdict) -> str:
    """Why a judge abstained, in one line, as the judge gave it."""
    return one_line(verdict.reason.removeprefix(ABSTAINED)) or "no reason recorded"


class Unfinished(Record):
    """An attempt, the last of its contestant on its task, that did not finish."""

    task: str
    contestant: str
    round: int
    status: AttemptStatus
    reason: str
    """One line: the attempt's error, or how it ended when it recorded none."""


class Abstention(Record):
    """A judge policy that picked no patch for a task."""

    task: str
    policy: str
    reason: str
    """One line: the judge's own reason."""


class Reasons(Record):
    """Why attempts did not finish and why judges abstained."""

    unfinished: list[Unfinished] = Field(default_factory=list)
    abstentions: list[Abstention] = Field(default_factory=list)


def reasons(finals: Iterable[Attempt], verdicts: Iterable[Verdict]) -> Reasons:
    """The reasons behind the last attempts (``finals``) that did not finish and behind
    every abstention among ``verdicts``, by task."""
    unfinished = [
        Unfinished(
            task=a.task_id,
            contestant=a.contestant,
            round=a.round,
            status=a.status,
            reason=attempt_reason(a),
        )
        for a in finals
        if a.role == "contestant" and a.status != AttemptStatus.FINISHED
    ]
    abstentions = [
        Abstention(task=v.task_id, policy=v.policy, reason=abstention_reason(v))
        for v in verdicts
        if v.pick is None
    ]
    return Reasons(
        unfinished=sorted(unfinished, key=lambda row: (row.task, row.contestant)),
        abstentions=sorted(abstentions, key=lambda row: (row.task, row.policy)),
    )
