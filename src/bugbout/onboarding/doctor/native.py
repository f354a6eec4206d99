"""A contestant's native setup and instruction arm, as the doctor shows them: what will
be copied into its HOME, which MCP servers start, which endpoints open, and what happens
to the checkout's instruction files."""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.core.contract.errors import ConfigError
from bugbout.core.race.contestants import Contestant
from bugbout.core.race.instructions import KEEP, REMOVE, arm_key
from bugbout.onboarding.doctor.check import Check


def native_checks(contestant: Contestant) -> Iterator[Check]:
    """A line for ``contestant``'s native setup and one for its instruction arm, when it
    has them; a setup or replacement file that cannot be used fails."""
    name, agent = contestant.name, contestant.agent
    fix = f"correct {contestant.role}.{name} in bugbout.yaml or on the command line"
    try:
        native = agent.native()
    except ConfigError as exc:
        yield Check(f"{name} native setup", False, str(exc), fix)
    else:
        if native is not None:
            yield Check(f"{name} native setup", True, native.describe())
    given = agent.options.instructions
    if given == KEEP:
        return
    try:
        arm_key(given)
    except ConfigError as exc:
        yield Check(f"{name} instructions", False, str(exc), fix)
        return
    done = "removed" if given == REMOVE else f"replaced by {given} (as {agent.instruction_file})"
    yield Check(f"{name} instructions", True, f"the checkout's instruction files are {done}")
