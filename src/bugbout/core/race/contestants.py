"""Contestants and examiners: the named agents of a bout, each built through the plugin
manager from its validated options, and where each one's attempt on a task is stored."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.instances import Instance, instance
from bugbout.core.contract.types import AgentPlugin, AssignmentPlugin
from bugbout.core.plumbing.models.cutoffs import KEY, parse_cutoff
from bugbout.core.race.agents import CodingAgent
from bugbout.core.race.examining import Assignment
from bugbout.core.race.prompt import PROMPT_VERSION, contestant_prompt
from bugbout.core.store.records import Task, digest
from bugbout.core.store.store import attempt_path

if TYPE_CHECKING:
    from bugbout.core.plumbing.testruns.test_runner import TestStyle


@dataclass(frozen=True)
class Contestant:
    """A named agent in the race: a contestant fixes, an examiner (with an assignment)
    only writes tests."""

    name: str
    agent: CodingAgent
    assignment: Assignment | None = None
    cutoff: str | None = None
    """Its declared knowledge cutoff (``knowledge-cutoff``), ``YYYY-MM-DD``."""
    assignment_options: dict[str, Any] = field(default_factory=dict, hash=False)
    """Its assignment's options that differ from the plugin's defaults."""
    repeat: int = 1
    """Which of its independent attempts on a task this is (``run.repeats``)."""

    @property
    def role(self) -> Literal["contestant", "examiner"]:
        return "contestant" if self.assignment is None else "examiner"

    @property
    def label(self) -> str:
        """Its name, and which repeat after the first: ``codex #2``."""
        return self.name if self.repeat == 1 else f"{self.name} #{self.repeat}"

    @property
    def quota(self) -> str:
        return self.agent.quota

    def key(self, task: Task) -> str:
        """What determines this agent's attempt on ``task``. The assignment's options are
        in it only when some differ from the defaults, and the repeat only after the
        first, and a drafted statement's text only when it has one: the keys of attempts
        made before these existed stay the same."""
        settings = json.dumps(self.agent.settings_key(), sort_keys=True, default=str)
        assignment = self.assignment.name if self.assignment else ""
        options = self.assignment_options
        changed = [json.dumps(options, sort_keys=True, default=str)] if options else []
        again = [f"repeat {self.repeat}"] if self.repeat > 1 else []
        drafted = [task.problem_statement] if task.drafted else []
        return digest(task.sha, settings, PROMPT_VERSION, assignment, *changed, *again, *drafted)

    def path(self, task: Task) -> str:
        """Where this agent's attempt on ``task`` is stored."""
        return attempt_path(task.id, self.name, self.key(task))

    def prompt(self, task: Task, *, tests: str, test_command: str, style: TestStyle) -> str:
        """The prompt for ``task``: the assignment's for an examiner, the contestants'
        otherwise; tests written in the test runner's ``style``."""
        if self.assignment is not None:
            return self.assignment.prompt(task, tests=tests, test_command=test_command, style=style)
        return contestant_prompt(task, tests=tests, test_command=test_command, style=style)


def with_repeats(racers: list[Contestant], repeats: int) -> list[Contestant]:
    """``racers`` with each contestant's repeats 2..``repeats`` after it; an examiner's
    tests are evidence, not samples: it runs once."""
    return [
        replace(racer, repeat=number)
        for racer in racers
        for number in range(1, (repeats if racer.role == "contestant" else 1) + 1)
    ]


ASSIGNMENT = AssignmentPlugin.kind
"""The key of an examiner's entry that names its assignment."""
DEFAULT_ASSIGNMENT = "reproduce"


def assignment_of(entry: str, given: object) -> Instance:
    """The assignment of the examiner whose settings key is ``entry``
    (``examiners.probe``): ``given`` names its plugin (``specify``; ``reproduce`` when
    unset) or is a map naming it under ``assignment`` with that plugin's options
    (``{assignment: specify, ...}``)."""
    if isinstance(given, Mapping):
        return instance(entry, ASSIGNMENT, ASSIGNMENT, given, example=DEFAULT_ASSIGNMENT)
    return Instance(entry, ASSIGNMENT, str(given or DEFAULT_ASSIGNMENT))


@dataclass(frozen=True)
class ContestantsSpec:
    """What the making of the contestants reads of the bout's settings: by role
    (``contestant``, ``examiner``), each chosen agent's entry (its options over its
    definition in ``bugbout.yaml``), and the names defined there."""

    chosen: Mapping[str, Mapping[str, dict[str, Any]]]
    defined: Mapping[str, frozenset[str]]


class ContestantPlugins(Protocol):
    """The plugins of an entry, made by the pipeline from the plugin manager."""

    def agent(self, entry: Instance) -> CodingAgent:
        """The agent ``entry`` names, with its validated options."""
        ...

    def assignment(self, entry: Instance) -> tuple[Assignment, dict[str, Any]]:
        """The assignment ``entry`` names, and its options that differ from the
        plugin's defaults."""
        ...


def make_contestants(spec: ContestantsSpec, plugins: ContestantPlugins) -> list[Contestant]:
    """The selected contestants and examiners, each with its adapter built from validated
    options (and an examiner with its assignment)."""
    racers = []
    for role in ("contestant", "examiner"):
        for name, entry in sorted(spec.chosen[role].items()):
            prefix = f"{role}s" if name in spec.defined[role] else role
            agent = instance(prefix, AgentPlugin.kind, name, entry, example="codex")
            options = agent.options
            assignment: Assignment | None = None
            changed: dict[str, Any] = {}
            if role == "examiner":
                given = assignment_of(agent.where, options.pop(ASSIGNMENT, None))
                assignment, changed = plugins.assignment(given)
            declared = options.pop(KEY, None)
            cutoff = parse_cutoff(name, declared) if declared is not None else None
            options.setdefault("name", name)
            racers.append(Contestant(name, plugins.agent(agent), assignment, cutoff, changed))
    names = [racer.name for racer in racers]
    if len(names) != len(set(names)):
        raise ConfigError("a contestant and an examiner share a name; rename one of them")
    return racers
