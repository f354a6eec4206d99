"""What an attempt's agent is given besides its checkout: a script that runs the tests as
the oracle does, its declared state folders, the team's native setup in its HOME, the
files its command line names, and its way out to its model's endpoints (and nowhere
else); and its transcript afterwards, where the instruction probe is looked for."""

from __future__ import annotations

import contextlib
import dataclasses
import shlex
import shutil
import tempfile
from pathlib import Path

from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.contract.transcript import Step, TranscriptReader
from bugbout.core.plumbing.confinement.untrusted import UntrustedFileError
from bugbout.core.plumbing.environments.environment import Environment
from bugbout.core.plumbing.environments.py2_tree import conversion_lines
from bugbout.core.plumbing.testruns.test_runner import TestRunner
from bugbout.core.race.agents import CodingAgent
from bugbout.core.race.instructions import Arm, probe_line
from bugbout.sandbox.egress import EgressProxy, plan
from bugbout.sandbox.identity import hand_over


def run_tests_script(
    runner: TestRunner,
    project: ProjectSettings,
    environment: Environment,
    workdir: Path,
    logdir: Path,
) -> str:
    """A script that runs the project's tests exactly as the oracle does, with
    ``runner``'s arguments
    (:meth:`~bugbout.core.plumbing.testruns.test_runner.TestRunner.script_args`: pytest's set the
    project's ``addopts`` aside as the environment's pytest allows).

    A tree its build converts with ``2to3`` is tested as ground truth tests it: on a copy
    converted on each call, in ``logdir`` (:mod:`~bugbout.core.plumbing.environments.py2_tree`)."""
    copy = logdir / "2to3" / workdir.name
    conversion = conversion_lines(workdir, copy)
    tree = copy if conversion else workdir
    command = environment.command(runner.script_args(environment, project), tree, [])
    variables = {**project.env, **command.env}
    script = logdir / "bin" / "run-tests"
    script.parent.mkdir(parents=True)
    script.write_text(
        "#!/bin/sh\n"
        + "".join(f"export {key}={shlex.quote(value)}\n" for key, value in variables.items())
        + "".join(conversion)
        + f"cd {shlex.quote(str(tree))}\n"
        + ("" if conversion else "exec ")  # a converted copy is removed when pytest ends
        + f'{shlex.join(command.argv)} "$@"\n'
    )
    script.chmod(0o755)
    return str(script)


def state_dir(entry: str, agent_home: Path) -> Path:
    """A declared state directory; ``~`` is the agent's private HOME."""
    if entry.startswith("~"):
        return agent_home / entry.lstrip("~/")
    return Path(entry)


def named_files(argv: list[str], masked: tuple[Path, ...]) -> tuple[Path, ...]:
    """Files the command line names (an agent's script), readable unless masked."""
    named = []
    for part in argv:
        path = Path(part)
        if path.is_absolute() and path.exists():
            resolved = path.resolve()
            if not any(resolved.is_relative_to(m) for m in masked):
                named.append(resolved)
    return tuple(named)


def start_egress(
    endpoints: tuple[str, ...], argv: list[str], stack: contextlib.ExitStack
) -> tuple[list[str], dict[str, str], Path]:
    """Start the egress proxy for ``endpoints``: the agent reaches those and nothing
    else. Its socket lives in a short temporary path (unix sockets allow ~107 bytes)."""
    try:
        egress_plan = plan(endpoints)
    except ValueError as exc:
        raise ConfigError(f"bad endpoint: {exc}") from None
    folder = Path(tempfile.mkdtemp(prefix="bugbout-egress-"))
    stack.callback(shutil.rmtree, folder, ignore_errors=True)
    socket_path = folder / "proxy.sock"
    stack.enter_context(EgressProxy(endpoints, socket_path))
    hand_over(folder)  # the confined user connects to the socket
    return [*egress_plan.forwarder(socket_path), *argv], dict(egress_plan.env), folder


def native_setup(agent: CodingAgent, home: Path, arm: Arm) -> Arm:
    """Copy the agent's native setup, if it has one, into its private ``home``, the probe
    seeded into the setup's instruction file; ``arm``, probed if that file exists."""
    native = agent.native()
    if native is None:
        return arm
    folder = native.copy(home)
    instructions = folder / agent.instruction_file
    if not instructions.is_file():
        return arm
    with instructions.open("a") as file:
        file.write(probe_line(arm.token))
    return dataclasses.replace(arm, probed=True)


def agent_transcript(
    transcript: TranscriptReader, agent: CodingAgent, logdir: Path
) -> list[Step] | None:
    """The agent's transcript, read by its plugin (``None``: it reads none, or the logs
    the agent left cannot be read)."""
    try:
        steps = transcript(agent=agent.harness, logdir=logdir)
    except UntrustedFileError:
        return None
    return steps
