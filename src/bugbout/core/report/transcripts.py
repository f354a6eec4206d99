"""Each attempt's transcript for its task page: the steps its agent plugin read from the
log folder (the ``bugbout_transcript`` hook), trimmed to what a page can hold, with the
first failing step and the test runs found; without a plugin that reads the format, the
tail of what the agent printed."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import Field

from bugbout.core.contract.transcript import Step, TranscriptReader
from bugbout.core.plumbing.confinement.untrusted import UntrustedFileError, read_untrusted
from bugbout.core.store.race_records import Attempt
from bugbout.core.store.records import Record

MAX_STEPS = 200
"""Steps kept per transcript: the first half and the last half of that many."""
MAX_OUTPUT = 2_000
"""Characters kept of a step's text and of its output (the end: where errors are)."""
MAX_RAW = 8_000
"""Characters kept of each log file's end when no plugin reads the format."""
RAW_LOGS = ("stdout.log", "stderr.log")


class Transcript(Record):
    """What an agent did on one attempt, as its page shows it."""

    steps: list[Step] = Field(default_factory=list)
    left_out: int = 0
    """Steps not kept, from the middle (beyond :data:`MAX_STEPS`)."""
    first_failure: int | None = None
    """The index in ``steps`` of the first failing command or tool call."""
    test_runs: list[int] = Field(default_factory=list)
    """The indices in ``steps`` of the commands that ran tests."""
    raw: str = ""
    """The end of each log file, when no plugin read the format."""


def transcripts(
    attempts: Iterable[Attempt], read: TranscriptReader | None
) -> dict[str, Transcript]:
    """Each attempt's transcript by revision, for those whose log folder is on disk, its
    steps as ``read`` (the ``bugbout_transcript`` hook, made by the pipeline) finds them;
    with no ``read``, or none for the agent, the end of what the agent printed."""
    found: dict[str, Transcript] = {}
    for attempt in attempts:
        logdir = Path(attempt.logdir) if attempt.logdir else None
        if logdir is None or not logdir.is_dir():
            continue
        try:
            steps = read(agent=attempt.agent, logdir=logdir) if read else None
            found[attempt.revision] = transcript(steps) if steps else raw_transcript(logdir)
        except UntrustedFileError as exc:  # the agent left something unreadable
            found[attempt.revision] = Transcript(raw=str(exc))
    return found


def transcript(steps: list[Step]) -> Transcript:
    """``steps`` trimmed, with the first failure and the test runs marked."""
    left_out = max(len(steps) - MAX_STEPS, 0)
    if left_out:
        steps = steps[: MAX_STEPS // 2] + steps[-MAX_STEPS // 2 :]
    kept = [
        Step(step.kind, _tail(step.text), _tail(step.output), step.exit_code, step.failed)
        for step in steps
    ]
    return Transcript(
        steps=kept,
        left_out=left_out,
        first_failure=next((i for i, step in enumerate(kept) if step.failed), None),
        test_runs=[i for i, step in enumerate(kept) if step.test_run],
    )


def raw_transcript(logdir: Path) -> Transcript:
    """The end of each log file the agent's standard streams went to."""
    parts = []
    for name in RAW_LOGS:
        text = read_untrusted(logdir / name, tail=True)
        if text and text.strip():
            parts.append(f"--- {name}\n{_tail(text, MAX_RAW)}")
    return Transcript(raw="\n".join(parts))


def _tail(text: str, limit: int = MAX_OUTPUT) -> str:
    return text if len(text) <= limit else f"[{len(text) - limit} characters cut]…{text[-limit:]}"
