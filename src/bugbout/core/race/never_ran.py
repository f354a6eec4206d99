"""An agent process that never ran: the sandbox could not start it, or it could not
find its own program, interpreter or package there. That is the setup's doing, not the
agent's: the attempt is an ``infra-error`` (left out of every rate, run again by
``--retry-failed``), never an ``agent-error`` that scores the agent 0.

An agent never ran when it left nothing (no patch, no token usage) and exited the way a
command that could not start exits:

- 126 or 127: what shells, ``env``, bubblewrap's and bugbout's guard's ``exec`` say for
  a program that cannot be run or is not there (``fix.sh: line 2: node: command not
  found``, ``/usr/bin/env: 'node': No such file or directory``);
- 2, with an interpreter's "cannot open" its script first (``python3: can't open file
  '/home/me/fix.py': [Errno 2] No such file or directory``, ``sh: 0: cannot open
  fix.sh: No such file``);
- 1, with the sandbox's own error first (``bwrap: execvp ./fix.sh: No such file or
  directory``), or with Python's failure to import a package as its last line
  (``ModuleNotFoundError: No module named 'openai'``): a package the sandbox hides.
"""

from __future__ import annotations

NOT_STARTED_EXITS = (126, 127)
"""Exit statuses of a command that could not be run or was not found."""
SANDBOX_ERRORS = ("bwrap: ", "unshare: ", "sandbox-exec: ")
"""How a sandbox begins the line that says it could not start its command."""
MISSING_PACKAGE = ("ModuleNotFoundError: ", "ImportError: ")
"""How Python ends a run that could not import a package."""
CANNOT_OPEN = ("can't open file", "cannot open")
"""How Python and the shell say they cannot open the script they were given (exit 2)."""
PREFIX = "the agent never started"
"""How an attempt's error begins when its agent never ran."""


def never_ran(
    exit_code: int | None, first: str | None, last: str | None, *, left_nothing: bool
) -> str | None:
    """Why an agent never ran (its error, one line), or ``None`` when it did run.
    ``first`` and ``last`` are the first and last non-blank lines of its standard error;
    ``left_nothing``: no patch and no token usage."""
    if not left_nothing or exit_code is None or exit_code == 0:
        return None
    line = (last or first or "no output").strip()
    if exit_code in NOT_STARTED_EXITS:
        found = f"exit status {exit_code}: {line}"
    elif exit_code == 2 and first and any(words in first for words in CANNOT_OPEN):
        found = f"exit status 2: {first.strip()}"
    elif exit_code == 1 and first and first.startswith(SANDBOX_ERRORS):
        found = f"exit status 1: {first.strip()}"
    elif exit_code == 1 and last and last.startswith(MISSING_PACKAGE):
        found = f"exit status 1: {line}"
    else:
        return None
    return (
        f"{PREFIX} ({found[:300]}): a program or package it needs is missing inside the "
        "sandbox; `bugbout doctor` checks each contestant, `bugbout run --retry-failed` "
        "runs it again"
    )
