"""The plugin contract's records: what each registration hook returns, one record type
per kind, and :class:`Options`, the base of every plugin's options model.

A plugin names itself, says how to build its implementation (``factory``) and which
options it accepts (``options``, an :class:`Options` model: unknown keys are errors,
keys are written with dashes). Each record type is generic in the protocol its
implementations follow, so ``Plugins.create(JudgePlugin, ...)`` is typed as a
:class:`~bugbout.core.judge.judging.Judge`. The plugin manager tracks which distribution each
record came from.

This module loads pydantic and nothing of the pipeline: every plugin module imports it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from bugbout.core.contract.errors import ConfigError

if TYPE_CHECKING:  # the kinds' protocols, named as strings in the records' bases below
    from bugbout.core.audit.auditing import Auditor  # noqa: F401
    from bugbout.core.judge.judging import Judge  # noqa: F401
    from bugbout.core.mine.issues import IssueSource  # noqa: F401
    from bugbout.core.mine.mining import Miner  # noqa: F401
    from bugbout.core.plumbing.environments.environment import EnvironmentBuilder  # noqa: F401
    from bugbout.core.plumbing.runtime.executor import Executor  # noqa: F401
    from bugbout.core.plumbing.testruns.test_runner import TestRunner  # noqa: F401
    from bugbout.core.race.agents import CodingAgent  # noqa: F401
    from bugbout.core.race.examining import Assignment  # noqa: F401
    from bugbout.core.report.report_store import Reporter  # noqa: F401
    from bugbout.sandbox.confinement import Sandbox  # noqa: F401

NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")

T_co = TypeVar("T_co", covariant=True)
"""The protocol a kind's implementations follow."""


def dashed(name: str) -> str:
    """An option's key as users write it: ``keep_assignments`` → ``keep-assignments``."""
    return name.replace("_", "-")


class Options(BaseModel):
    """The base of every plugin's options model: a misspelt key is an error, keys are
    written with dashes (``max-listed``) and accepted with underscores from Python.

    The model's validator is built the first time options are validated, not when the
    plugin module is imported.
    """

    model_config = ConfigDict(
        extra="forbid", alias_generator=dashed, populate_by_name=True, defer_build=True
    )


class NoOptions(Options):
    """The options model of a plugin that takes none."""


class PluginSpec(BaseModel, Generic[T_co]):
    """A plugin of one kind: its name, factory and options model.

    ``factory(options)`` returns the implementation; it runs only when the plugin is
    used, so heavy imports belong inside it.
    """

    model_config = ConfigDict(
        frozen=True, arbitrary_types_allowed=True, extra="forbid", defer_build=True
    )

    kind: ClassVar[str] = "plugin"
    hook: ClassVar[str] = ""
    """The registration hook that returns records of this kind."""

    name: str
    if TYPE_CHECKING:  # checked against the kind's protocol; at run time, any callable
        factory: Callable[[Any], T_co]
    else:
        factory: Callable[..., Any]
    options: type[BaseModel] = NoOptions
    description: str = ""

    if not TYPE_CHECKING:

        def __class_getitem__(cls, protocol: Any) -> Any:
            """The protocol is for the type checker: at run time a kind's record type
            subclasses this class itself, not a class pydantic would build for each
            parametrisation (a cost every plugin module's import would pay)."""
            return cls

    @field_validator("name")
    @classmethod
    def _normalise(cls, name: str) -> str:
        name = name.strip().lower().replace("_", "-")
        if not NAME_PATTERN.match(name):
            raise ValueError(f"{name!r} is not a valid plugin name (use lowercase words and -)")
        return name

    def parse_options(self, options: dict[str, Any]) -> BaseModel:
        """Validate ``options``; a misspelt key is a one-line error naming the valid keys."""
        try:
            return self.options.model_validate(options)
        except ValidationError as exc:
            valid = sorted(field.alias or key for key, field in self.options.model_fields.items())
            problems = "; ".join(_problem(err, valid) for err in exc.errors())
            raise ConfigError(
                f"{self.kind} {self.name!r}: {problems} "
                f"(valid options: {', '.join(valid) or 'none'})"
            ) from None


def _problem(error: Any, valid: list[str]) -> str:
    """One validation error of a plugin's options: a misspelt key gets the closest name."""
    where = ".".join(str(part) for part in error["loc"]) or "options"
    given = error.get("input")
    if error["type"] == "string_type" and type(given) in (int, float):
        return (
            f"{where}: expects text, not the number {given}; quote it (YAML and the command "
            "line read an unquoted 3.10 as the number 3.1)"
        )
    if error["type"] != "extra_forbidden":
        return f"{where}: {error['msg']}"
    import difflib

    close = difflib.get_close_matches(where, valid, n=1)
    return f"{where}: no such option" + (f"; did you mean {close[0]}?" if close else "")


class MinerPlugin(PluginSpec["Miner"]):
    """Finds replayable fixes in a repository: ``factory(options) -> Miner``."""

    kind = "miner"
    hook = "bugbout_miners"


class IssueSourcePlugin(PluginSpec["IssueSource"]):
    """Looks up the issue a fix names: ``factory(options) -> IssueSource``."""

    kind = "issue-source"
    hook = "bugbout_issue_sources"


class EnvironmentPlugin(PluginSpec["EnvironmentBuilder"]):
    """Builds the environment tests run in: ``factory(options) -> EnvironmentBuilder``."""

    kind = "environment"
    hook = "bugbout_environments"


class TestRunnerPlugin(PluginSpec["TestRunner"]):
    """Runs a project's tests and reports each one's outcome by id:
    ``factory(options) -> TestRunner``."""

    __test__ = False  # not a pytest class

    kind = "test-runner"
    hook = "bugbout_test_runners"


class AgentPlugin(PluginSpec["CodingAgent"]):
    """A coding agent that plays contestant or examiner: ``factory(options) -> agent``."""

    kind = "agent"
    hook = "bugbout_agents"


class SandboxPlugin(PluginSpec["Sandbox"]):
    """Confines agents and test runs: ``factory(options) -> sandbox``."""

    kind = "sandbox"
    hook = "bugbout_sandboxes"


class ExecutorPlugin(PluginSpec["Executor"]):
    """Dispatches a bout's jobs (attempts) to workers: ``factory(options) -> executor``."""

    kind = "executor"
    hook = "bugbout_executors"


class AssignmentPlugin(PluginSpec["Assignment"]):
    """What an examiner is asked for (``reproduce``, ``specify``): its prompt and how its
    tests are validated: ``factory(options) -> assignment``."""

    kind = "assignment"
    hook = "bugbout_assignments"


class JudgePlugin(PluginSpec["Judge"]):
    """A policy that picks one patch per task from the executed evidence."""

    kind = "judge"
    hook = "bugbout_judges"


class AuditorPlugin(PluginSpec["Auditor"]):
    """Audits a patch against the hidden tests and a fail-on-base baseline."""

    kind = "auditor"
    hook = "bugbout_auditors"


class ReporterPlugin(PluginSpec["Reporter"]):
    """Renders a bout's results (terminal, Markdown, JSON, HTML, ...)."""

    kind = "reporter"
    hook = "bugbout_reporters"


KINDS: dict[str, type[PluginSpec[Any]]] = {
    spec.kind: spec
    for spec in (
        MinerPlugin,
        IssueSourcePlugin,
        EnvironmentPlugin,
        TestRunnerPlugin,
        AgentPlugin,
        SandboxPlugin,
        ExecutorPlugin,
        AssignmentPlugin,
        JudgePlugin,
        AuditorPlugin,
        ReporterPlugin,
    )
}
"""Every plugin kind by its name, in pipeline order."""

RENAMED_KINDS = {"examiner": "assignment"}
"""Plugin kinds that were renamed: the old word → the kind's word now."""
