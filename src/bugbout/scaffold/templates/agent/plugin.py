"""The ``__NAME__`` agent: bugbout's adapter for a coding agent's command line.

bugbout does everything around the agent (a fresh checkout, the sandbox, the timeout,
the logs, the patch, the scores); the adapter only says how to start it:
:meth:`~bugbout.agents.CodingAgent.invocation`. This one runs the configured
``command`` in the checkout, the prompt on its standard input. Adapt ``invocation``
(and ``parse``, for its summary and token usage) to your agent's CLI.
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.agents import AgentOptions, AgentPlugin, CodingAgent, Invocation, Session, hookimpl
from pydantic import Field


class __TITLE__Options(AgentOptions):
    """Options of the ``__NAME__`` agent (besides ``model``, ``name``, ``env``, ...)."""

    command: tuple[str, ...] = Field(default=("__NAME__",), min_length=1)
    """The agent's command line: the program (found on ``PATH``) and its arguments."""
    endpoints: tuple[str, ...] = ()
    """The model endpoints it must reach from the sandbox (``https://api.example.com``)."""


class __TITLE__Agent(CodingAgent):
    """Runs ``command`` in the checkout with the prompt on standard input."""

    harness = "__NAME__"
    Options = __TITLE__Options
    options: __TITLE__Options

    @property
    def executable(self) -> str:
        return str(self.options.command[0])

    def invocation(self, session: Session) -> Invocation:
        argv = [self.command(), *self.options.command[1:]]
        return Invocation(argv, stdin=session.prompt, endpoints=self.options.endpoints)


@hookimpl
def bugbout_agents() -> Iterator[AgentPlugin]:
    yield AgentPlugin(
        name=__TITLE__Agent.harness,
        factory=__TITLE__Agent.from_options,
        options=__TITLE__Options,
        description="a coding agent run by its command line, the prompt on standard input",
    )
