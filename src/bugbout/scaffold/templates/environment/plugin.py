"""The ``__NAME__`` environment: an existing Python interpreter, with variables set for
the project's tests.

An environment builder prepares what a task's tests run in, once per project era, and
the environment turns a pytest command line into the exact command to run. This one
delegates to bugbout's ``interpreter`` builder and adds ``variables`` to every command.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from bugbout.environments import (
    Command,
    Environment,
    EnvironmentPlugin,
    EnvironmentRequest,
    Options,
    create_plugin,
    hookimpl,
)
from pydantic import Field


class __TITLE__Options(Options):
    """Options of the ``__NAME__`` environment."""

    python: str | None = None
    """The interpreter (a path or a command); by default the one bugbout runs on."""
    variables: dict[str, str] = Field(default_factory=dict)
    """Environment variables for every test run, e.g. ``{TZ: UTC}``."""


class __TITLE__Environment:
    """The interpreter's environment, with the variables added."""

    def __init__(self, inner: Environment, variables: dict[str, str]) -> None:
        self.inner = inner
        self.variables = variables

    @property
    def description(self) -> str:
        return f"__NAME__: {self.inner.description}"

    @property
    def key(self) -> str:
        return self.inner.key

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        command = self.inner.command(args, tree, extra_paths)
        return command.model_copy(update={"env": {**command.env, **self.variables}})


class __TITLE__Builder:
    """Builds the interpreter's environment and wraps it."""

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()
        self.inner = create_plugin(EnvironmentPlugin, "interpreter", {"path": self.options.python})

    def build(self, request: EnvironmentRequest) -> __TITLE__Environment:
        return __TITLE__Environment(self.inner.build(request), dict(self.options.variables))


@hookimpl
def bugbout_environments() -> Iterator[EnvironmentPlugin]:
    yield EnvironmentPlugin(
        name="__NAME__",
        factory=__TITLE__Builder,
        options=__TITLE__Options,
        description="an existing Python interpreter, with variables for the tests",
    )
