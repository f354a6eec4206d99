"""What an agent did, step by step, as its plugin reads it from its own log format
(the optional ``bugbout_transcript`` hook): the messages it wrote, the commands it ran
with their exit codes, the files it edited, its other tool calls and its final message."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

StepKind = Literal["message", "command", "edit", "tool", "final"]
TEST_COMMAND = re.compile(r"\b(pytest|py\.test|unittest|tox|nox)\b|\bmanage\.py test\b")
"""A command that runs tests."""


@dataclass(frozen=True)
class Step:
    """One step of an agent's session."""

    kind: StepKind
    text: str
    """The message, the command line, the edited file, or the tool call."""
    output: str = ""
    """What the command printed or the tool returned."""
    exit_code: int | None = None
    """A command's exit code (``None``: not reported)."""
    failed: bool = False
    """The command exited non-zero, or the tool call reported an error."""

    @property
    def test_run(self) -> bool:
        """A command that runs tests."""
        return self.kind == "command" and bool(TEST_COMMAND.search(self.text))


def as_dict(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (logs are the agent's)."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """``value`` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def tool_step(
    name: str, arguments: dict[str, Any], output: str, *, failed: bool, edits: frozenset[str]
) -> Step:
    """A tool call that is not a shell command: a call of one of ``edits`` as the file it
    changed (its ``file_path`` argument), any other with its arguments."""
    if name in edits:
        return Step("edit", str(arguments.get("file_path", name)), output, failed=failed)
    shown = ", ".join(f"{key}={value}" for key, value in arguments.items())
    return Step("tool", f"{name}({shown})", output, failed=failed)


class TranscriptReader(Protocol):
    """Reads an agent's transcript from its log folder (the ``bugbout_transcript`` hook)."""

    def __call__(self, *, agent: str, logdir: Path) -> list[Step] | None: ...
