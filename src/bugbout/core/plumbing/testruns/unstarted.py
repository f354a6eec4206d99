"""Test runs that never started: the sandbox, the container runtime or the interpreter
failed before pytest loaded, so nothing of the code under test was judged.

Such a run is the machine's doing, never a verdict on a patch: it is tried again, and
when it still does not start :class:`TestRunNotStarted` is raised, which every stage
treats as an infrastructure failure, with a warning, and tries again at the next run: an
``environment-error`` oracle, an examiner's ``infra-error`` attempt, a task whose
cross-examination or score did not run left undecided, an audit not written.

A run never started when both hold:

- bugbout's pytest plugin never loaded: the key line bugbout wrote at the start of the
  outcome file is still there (the plugin blanks it as it is imported, before any
  conftest or test module);
- the command's exit status is a wrapper's that could not start its command: 125
  (podman's own failure, an overlay that did not mount), 126 or 127 (a program that
  cannot be run or is not there, as podman, unshare, env and shells say it), or 1 with
  the wrapper's own error first (``bwrap: ...``, ``unshare: ...``).
"""

from __future__ import annotations

from bugbout.core.contract.errors import BugboutError

NOT_STARTED_EXITS = (125, 126, 127)
"""Exit statuses of a wrapper whose command never ran."""
WRAPPER_ERRORS = ("bwrap: ", "unshare: ")
"""How bubblewrap and unshare begin the line that says they could not set up (exit 1)."""
TRIES = 3
"""How many times a run that never started is started in all."""
PAUSE = 1.0
"""Seconds before the second try (doubled before each next one)."""


class TestRunNotStarted(BugboutError):
    """A test run whose test process never started; the message says why, in one line."""

    __test__ = False  # not a pytest test class


def never_started(
    outcomes: bytes, key_line: bytes, exit_code: int | None, output: str
) -> str | None:
    """Why a finished run never started its test process (``None``: it did start).
    ``outcomes`` is the outcome file as the run left it, ``key_line`` what bugbout wrote
    first in it, ``output`` the run's standard output and error."""
    if exit_code is None or not outcomes.startswith(key_line):
        return None
    first = next((line.strip() for line in output.splitlines() if line.strip()), "")
    if exit_code in NOT_STARTED_EXITS:
        return f"exit status {exit_code}: {_last(output)}"
    if exit_code == 1 and first.startswith(WRAPPER_ERRORS):
        return f"exit status 1: {first[:400]}"
    return None


def _last(output: str) -> str:
    """The last non-blank line of ``output`` (the wrapper's error), at most 400 characters."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1][:400] if lines else "no output"
