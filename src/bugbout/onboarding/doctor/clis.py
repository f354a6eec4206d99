"""Each contestant's CLI: it builds as a bout builds it, is installed, answers ``--version``,
and still accepts every ``--flag`` its adapter passes (looked up in its ``--help``); and
its native setup and instruction arm (:mod:`bugbout.onboarding.doctor.native`)."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.manager import Plugins, create_plugin
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.contract.types import SandboxPlugin
from bugbout.core.pipeline import build_contestants
from bugbout.core.race.agents import Session
from bugbout.core.race.contestants import Contestant
from bugbout.onboarding.doctor.check import Check
from bugbout.onboarding.doctor.known_agents import KNOWN_AGENTS, dry_entry
from bugbout.onboarding.doctor.native import native_checks
from bugbout.onboarding.doctor.probes import distribution_version, probe, probe_env, version_in
from bugbout.sandbox.confinement import Confinement

_FLAG = re.compile(r"--[A-Za-z0-9][\w-]*")
_SUBCOMMAND = re.compile(r"[A-Za-z][\w-]*")


def contestant_checks(settings: BoutSettings, plugins: Plugins) -> Iterator[Check]:
    """Each contestant and examiner: it builds, its CLI is installed and answers, its
    flags are known."""
    for role, name, entry in selected_agents(settings):
        contestant, problem = build_contestant(settings, plugins, role, name, entry)
        if problem is not None:
            yield Check(
                f"{name} settings",
                False,
                problem,
                f"correct {role}.{name} in bugbout.yaml or on the command line",
            )
            # Still look at the CLI, with the options a dry run gives it (e.g. a model).
            dry = dry_entry(entry, "http://127.0.0.1")
            contestant, _ = build_contestant(settings, plugins, role, name, dry)
            if contestant is None:
                continue
        assert contestant is not None
        yield from native_checks(contestant)
        with tempfile.TemporaryDirectory(prefix="bugbout-doctor-") as scratch:
            yield from cli_checks(contestant, Path(scratch))


def cli_checks(contestant: Contestant, scratch: Path) -> Iterator[Check]:
    """``contestant``'s CLI: found on PATH, its version, and the flags its adapter passes
    listed in its ``--help`` (and its subcommand's). Runs with a private HOME in
    ``scratch``, and without the user's credentials."""
    name, agent = contestant.name, contestant.agent
    executable = shutil.which(agent.executable) if agent.executable else None
    if executable is None:
        yield Check(
            name,
            False,
            f"{agent.executable or 'its program'!r} is not installed (not on PATH)",
            install_hint(contestant),
        )
        return
    session = dummy_session(scratch)
    env = probe_env(agent, session)
    answer = probe([executable, "--version"], env=env, cwd=session.workdir)
    program = Path(executable).name
    if answer.slow:
        yield Check(
            name,
            False,
            f"`{program} --version` {answer.problem}",
            "run `bugbout doctor` again when the machine is less busy",
        )
        return
    if not answer.ran:
        yield Check(
            name,
            False,
            f"`{program} --version` failed: {answer.problem}",
            f"reinstall it: {install_hint(contestant)}",
        )
        return
    version = version_in(answer.text) if answer.ok else None
    known = KNOWN_AGENTS.get(agent.harness)
    if version is None and known and known.distribution:
        version = distribution_version(executable, known.distribution)
    if version is None and known and not answer.ok:
        yield Check(
            name,
            False,
            f"`{program} --version` failed: {answer.problem}",
            f"reinstall it: {known.install}",
        )
    else:
        unknown = f"(version unknown: `{program} --version` gave {answer.problem or 'none'})"
        yield Check(name, True, f"{program} {version or unknown} at {executable}")
    yield flag_check(contestant, session, env)


def flag_check(contestant: Contestant, session: Session, env: dict[str, str]) -> Check:
    """Every ``--flag`` the adapter passes appears in the CLI's ``--help``."""
    name = f"{contestant.name} flags"
    try:
        argv = contestant.agent.invocation(session).argv
    except (BugboutError, ValueError, OSError) as exc:
        return Check(name, False, f"the adapter cannot build its command line: {exc}")
    flags = sorted({flag for part in argv[1:] if _FLAG.fullmatch(flag := part.split("=", 1)[0])})
    if not flags:
        return Check(name, True, "passes no --flags")
    program = Path(argv[0]).name
    helps = [[argv[0], "--help"]]
    if len(argv) > 1 and not argv[1].startswith("-"):
        if not _SUBCOMMAND.fullmatch(argv[1]):
            return Check(name, True, f"not checked: they are {argv[1]}'s, not {program}'s")
        helps.append([argv[0], argv[1], "--help"])
    texts = []
    for command in helps:
        answer = probe(command, env=env, cwd=session.workdir)
        # Some CLIs exit non-zero after printing their help: the text counts if it has flags.
        if not answer.ok and not any(listed(flag, answer.text) for flag in flags):
            shown = " ".join([program, *command[1:]])
            return Check(name, False, f"`{shown}` failed: {answer.problem}")
        texts.append(answer.text)
    text = "\n".join(texts)
    missing = [flag for flag in flags if not listed(flag, text)]
    asked = " and ".join(f"`{' '.join([program, *command[1:]])}`" for command in helps)
    if missing:
        known = KNOWN_AGENTS.get(contestant.agent.harness)
        return Check(
            name,
            False,
            f"{asked} does not list {', '.join(missing)}, which bugbout passes",
            f"update the CLI ({known.upgrade})" if known else "update the CLI or its command",
        )
    return Check(name, True, f"the {len(flags)} --flags bugbout passes are all in {asked}")


def listed(flag: str, text: str) -> bool:
    """Whether ``flag`` appears in ``text`` as a whole flag (``--model`` is not in
    ``--model-class``)."""
    return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text) is not None


def install_hint(contestant: Contestant) -> str:
    known = KNOWN_AGENTS.get(contestant.agent.harness)
    if known:
        return known.install
    program = contestant.agent.executable
    return f"install {program!r}, or correct {contestant.role}.{contestant.name}'s command"


def dummy_session(scratch: Path, prompt: str = "Fix the bug in add(), please.") -> Session:
    """A session in ``scratch`` for building an invocation that is never run."""
    workdir, logdir, home = scratch / "work", scratch / "logs", scratch / "home"
    for directory in (workdir, logdir, home):
        directory.mkdir(parents=True, exist_ok=True)
    prompt_file = logdir / "prompt.md"
    prompt_file.write_text(prompt)
    return Session(
        prompt=prompt,
        workdir=workdir,
        logdir=logdir,
        home=home,
        sandbox=create_plugin(SandboxPlugin, "none"),
        confinement=Confinement(workdir=workdir, writable=(logdir, home)),
        prompt_file=prompt_file,
        test_command="true",
    )


def selected_agents(settings: BoutSettings) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """Every selected contestant and examiner: ``(role, name, entry)``."""
    for role in ("contestant", "examiner"):
        for name, entry in sorted(settings.chosen(role).items()):
            yield role, name, entry


def build_contestant(
    settings: BoutSettings, plugins: Plugins, role: str, name: str, entry: Mapping[str, Any]
) -> tuple[Contestant | None, str | None]:
    """One contestant (or examiner) built as a bout builds it, or why it cannot be: the
    user's mistake (a setting); anything else is doctor's own failure and propagates."""
    alone: dict[str, dict[str, Any]] = {key: {} for key in ("contestants", "examiners")}
    alone |= {"contestant": {}, "examiner": {}, role: {name: dict(entry)}}
    try:
        (contestant,) = build_contestants(settings.model_copy(update=alone), plugins)
    except (BugboutError, ValidationError) as exc:
        return None, str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return contestant, None
