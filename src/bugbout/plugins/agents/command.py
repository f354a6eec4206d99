"""The ``command`` agent: any agent that runs unattended, through configuration alone."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from bugbout.agents import (
    AgentOptions,
    AgentPlugin,
    CodingAgent,
    ConfigError,
    Invocation,
    Session,
    hookimpl,
)

PLACEHOLDERS = ("prompt", "prompt_file", "workdir", "logdir", "model")


class CommandOptions(AgentOptions):
    """Options of the ``command`` agent."""

    command: tuple[str, ...] = Field(min_length=1)
    """The command line; ``{prompt}``, ``{prompt_file}``, ``{workdir}``, ``{logdir}`` and
    ``{model}`` are filled in. Without ``{prompt}`` or ``{prompt_file}`` the prompt
    arrives on standard input."""
    sandboxed: bool = True
    """``False`` runs the agent without bugbout's sandbox: only for agents that sandbox
    themselves."""
    endpoints: tuple[str, ...] = ()
    """The model endpoints the agent must reach (URLs); by default it reaches nothing."""


class CommandAgent(CodingAgent):
    """Runs a configured command line in the checkout."""

    harness = "command"
    Options = CommandOptions
    options: CommandOptions

    def __init__(self, model: str | None = None, **options: object) -> None:
        super().__init__(model, **options)
        if not self.options.name:
            raise ConfigError("a `command` agent needs a name (the key it is defined under)")

    @property
    def executable(self) -> str:
        return str(self.options.command[0])

    def invocation(self, session: Session) -> Invocation:
        values = {
            "prompt": session.prompt,
            "prompt_file": str(session.prompt_file),
            "workdir": str(session.workdir),
            "logdir": str(session.logdir),
            "model": self.model or "",
        }
        argv = [_fill(part, values) for part in self.options.command]
        uses_prompt = any("{prompt}" in p or "{prompt_file}" in p for p in self.options.command)
        return Invocation(
            argv,
            stdin=None if uses_prompt else session.prompt,
            confined=self.options.sandboxed,
            endpoints=self.options.endpoints,
        )


def _fill(part: str, values: dict[str, str]) -> str:
    for name in PLACEHOLDERS:
        part = part.replace("{" + name + "}", values[name])
    return part


@hookimpl
def bugbout_agents() -> Iterator[AgentPlugin]:
    yield AgentPlugin(
        name=CommandAgent.harness,
        factory=CommandAgent.from_options,
        options=CommandOptions,
        description="any agent with a command line, configured in bugbout.yaml",
    )
