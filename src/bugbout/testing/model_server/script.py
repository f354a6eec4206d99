"""What the scripted model does: its :class:`Script` of :class:`Shell` and :class:`Say` steps,
the step a model turn gets, and the :class:`RecordedRequest` of each request it answered."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MSWEA_SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""mini-swe-agent finishes when a command's output starts with this line."""


@dataclass(frozen=True)
class Shell:
    """The model asks to run ``command`` in the agent's working directory."""

    command: str


@dataclass(frozen=True)
class Say:
    """The model's final answer: the conversation ends. With ``echo`` (a regular
    expression), the answer goes on with each distinct match of it in the request: what
    the agent showed the model (its instruction files, its tools) said back."""

    text: str
    echo: str | None = None


Step = Shell | Say


class Script:
    """An ordered list of steps; a conversation's ``n``-th model turn gets step ``n``.

    Past the end, every turn gets :attr:`final` (``Say("Done.")`` by default), so an agent that
    keeps going after the last scripted step still finishes.

    The JSON form is a list of one-key objects: ``[{"shell": "ls"}, {"say": "Done."}]``.
    """

    def __init__(self, steps: Iterable[Step] = (), *, final: Say | None = None) -> None:
        self.steps: tuple[Step, ...] = tuple(steps)
        for step in self.steps:
            if not isinstance(step, Shell | Say):
                raise TypeError(f"a script step must be Shell or Say, not {step!r}")
        self.final = final or Say("Done.")

    def step(self, index: int) -> Step:
        """The step for a model turn that follows ``index`` tool results."""
        if 0 <= index < len(self.steps):
            return self.steps[index]
        return self.final

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Script):
            return NotImplemented
        return self.steps == other.steps and self.final == other.final

    def __hash__(self) -> int:
        return hash((self.steps, self.final))

    def __repr__(self) -> str:
        return f"Script({list(self.steps)!r})"

    @classmethod
    def from_json(cls, data: Sequence[Mapping[str, str]] | str) -> Script:
        """A script from its JSON form (the parsed list, or the JSON text)."""
        if isinstance(data, str):
            data = json.loads(data)
        if not isinstance(data, list | tuple):
            raise ValueError("a script is a JSON list of {'shell': ...} or {'say': ...} objects")
        steps: list[Step] = []
        for number, item in enumerate(data, 1):
            if not isinstance(item, Mapping) or len(item) != 1:
                raise ValueError(f"step {number}: expected one key, 'shell' or 'say': {item!r}")
            ((kind, value),) = item.items()
            if not isinstance(value, str):
                raise ValueError(f"step {number}: {kind!r} needs a string, got {value!r}")
            if kind == "shell":
                steps.append(Shell(value))
            elif kind == "say":
                steps.append(Say(value))
            else:
                raise ValueError(f"step {number}: unknown kind {kind!r} (use 'shell' or 'say')")
        return cls(steps)

    def to_json(self) -> list[dict[str, str]]:
        """The JSON form: a list of ``{"shell": command}`` / ``{"say": text}`` objects."""
        return [
            {"shell": step.command} if isinstance(step, Shell) else {"say": step.text}
            for step in self.steps
        ]

    @classmethod
    def load(cls, path: str | Path) -> Script:
        """A script from a JSON file."""
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received.

    ``protocol`` is ``"anthropic"``, ``"responses"``, ``"chat"``, ``"gemini"`` or ``"other"``;
    ``step`` is the script index served, or ``None`` for side requests that did not use the
    script (titles, quota checks, token counts, HEAD probes).
    """

    method: str
    path: str
    body: Any
    query: dict[str, list[str]] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    protocol: str = "other"
    step: int | None = None
    stream: bool = False


def is_mswea(body: Any) -> bool:
    """Whether the request comes from mini-swe-agent (its prompt names the submit command)."""
    return MSWEA_SUBMIT in json.dumps(body)


def _mswea_submit_command(text: str) -> str:
    return f"echo {MSWEA_SUBMIT} && printf '%s\\n' {shlex.quote(text)}"


def scripted_action(script: Script, step: int, body: Any) -> Step:
    """The script's step, with ``Say`` turned into mini-swe-agent's submit command for it."""
    action = script.step(step)
    if isinstance(action, Say) and action.echo is not None:
        found = dict.fromkeys(re.findall(action.echo, json.dumps(body)))
        action = Say(" ".join([action.text, *found]))
    if isinstance(action, Say) and is_mswea(body):
        return Shell(_mswea_submit_command(action.text))
    return action
