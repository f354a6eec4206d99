"""Plugin records: what each registration hook returns, one record type per kind.

A plugin names itself, says how to build its implementation (``factory``) and which
options it accepts (``options``, a pydantic model whose unknown keys are errors). The
plugin manager tracks which distribution each record came from.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from bugbout.core.errors import ConfigError

NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


class NoOptions(BaseModel):
    """The options model of a plugin that takes none."""

    model_config = ConfigDict(extra="forbid")


class PluginSpec(BaseModel):
    """A plugin of one kind: its name, factory and options model.

    ``factory(options)`` returns the implementation; it runs only when the plugin is
    used, so heavy imports belong inside it.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, extra="forbid")

    kind: ClassVar[str] = "plugin"
    hook: ClassVar[str] = ""
    """The registration hook that returns records of this kind."""

    name: str
    factory: Callable[..., Any]
    options: type[BaseModel] = NoOptions
    description: str = ""

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
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'options'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ConfigError(
                f"{self.kind} {self.name!r}: {problems} "
                f"(valid options: {', '.join(valid) or 'none'})"
            ) from None

    def create(self, options: dict[str, Any] | None = None) -> Any:
        """Build the implementation with validated ``options``."""
        return self.factory(self.parse_options(options or {}))


class MinerPlugin(PluginSpec):
    """Finds replayable fixes in a repository: ``factory(options) -> Miner``."""

    kind = "miner"
    hook = "bugbout_miners"


class IssueSourcePlugin(PluginSpec):
    """Looks up the issue a fix names: ``factory(options) -> IssueSource``."""

    kind = "issue-source"
    hook = "bugbout_issue_sources"


class EnvironmentPlugin(PluginSpec):
    """Builds the environment tests run in: ``factory(options) -> EnvironmentBuilder``."""

    kind = "environment"
    hook = "bugbout_environments"


class AgentPlugin(PluginSpec):
    """A coding agent that plays contestant or examiner: ``factory(options) -> agent``."""

    kind = "agent"
    hook = "bugbout_agents"


class SandboxPlugin(PluginSpec):
    """Confines agents and test runs: ``factory(options) -> sandbox``."""

    kind = "sandbox"
    hook = "bugbout_sandboxes"


class ExecutorPlugin(PluginSpec):
    """Dispatches a bout's jobs (attempts) to workers: ``factory(options) -> executor``."""

    kind = "executor"
    hook = "bugbout_executors"


class ExaminerPlugin(PluginSpec):
    """An examiner assignment (``reproduce``, ``specify``): its prompt and how its tests are
    validated: ``factory(options) -> assignment``."""

    kind = "examiner"
    hook = "bugbout_examiners"


class JudgePlugin(PluginSpec):
    """A policy that picks one patch per task from the executed evidence."""

    kind = "judge"
    hook = "bugbout_judges"


class AuditorPlugin(PluginSpec):
    """Audits a patch against the hidden tests and a fail-on-base baseline."""

    kind = "auditor"
    hook = "bugbout_auditors"


class ReporterPlugin(PluginSpec):
    """Renders a bout's results (terminal, Markdown, JSON, HTML, ...)."""

    kind = "reporter"
    hook = "bugbout_reporters"


KINDS: dict[str, type[PluginSpec]] = {
    spec.kind: spec
    for spec in (
        MinerPlugin,
        IssueSourcePlugin,
        EnvironmentPlugin,
        AgentPlugin,
        SandboxPlugin,
        ExecutorPlugin,
        ExaminerPlugin,
        JudgePlugin,
        AuditorPlugin,
        ReporterPlugin,
    )
}
"""Every plugin kind by its name, in pipeline order."""
