"""Short commands doctor runs (``--version``, ``--help``) and the environments it runs them
in: never with the user's credentials."""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bugbout.core.contract.errors import BugboutError
from bugbout.core.plumbing.confinement.process import run_logged
from bugbout.core.race.agents import CodingAgent, Session
from bugbout.onboarding.doctor.known_agents import SECRET_VARIABLE

PROBE_TIMEOUT = 60.0
"""Seconds ``<cli> --version`` and ``<cli> --help`` may take: generous, since a Node CLI
on a loaded machine can take tens of seconds to start."""
_VERSION = re.compile(r"\d+(?:\.\d+)+(?:[-+.][0-9A-Za-z.]+)?")


@dataclass(frozen=True)
class Answer:
    """What a probe printed, and what went wrong."""

    ok: bool
    """It exited 0."""
    text: str
    problem: str = ""
    ran: bool = True
    """It started and ended in time."""
    slow: bool = False
    """It started but did not answer in time: the machine is busy, the CLI is not broken."""


def probe(argv: list[str], *, env: dict[str, str], cwd: Path | None = None) -> Answer:
    """Run a short command (``--version``, ``--help``): its output, and what went wrong."""
    with tempfile.TemporaryDirectory(prefix="bugbout-probe-") as scratch:
        folder = Path(scratch)
        try:
            ended = run_logged(
                argv,
                cwd=cwd or folder,
                env=env,
                stdin=None,
                timeout=PROBE_TIMEOUT,
                stdout=folder / "stdout",
                stderr=folder / "stderr",
                limit=1_000_000,
            )
        except OSError as exc:
            return Answer(False, "", f"cannot start it: {exc}", ran=False)
        text = "\n".join(
            (folder / stream).read_text(errors="replace")
            for stream in ("stdout", "stderr")
            if (folder / stream).exists()
        )
    if ended.timed_out:
        return Answer(False, text, f"did not answer in {PROBE_TIMEOUT:g} s", ran=False, slow=True)
    if ended.exit_code != 0:
        lines = [line.strip() for line in text.splitlines() if re.search(r"[A-Za-z0-9]", line)]
        last = f": {lines[-1][:200]}" if lines else ""
        return Answer(False, text, f"exit {ended.exit_code}{last}")
    return Answer(True, text)


def probe_env(agent: CodingAgent, session: Session) -> dict[str, str]:
    """The agent's own environment for ``session`` (its private HOME and config dirs,
    its quiet settings), without credentials, with wide help text."""
    try:
        env = agent.environment(session)
    except (BugboutError, ValueError, OSError):
        env = quiet_env(session.home)
    env = {key: value for key, value in env.items() if not SECRET_VARIABLE.search(key)}
    env.update(COLUMNS="1000", NO_COLOR="1", TERM="dumb")
    return env


def quiet_env(home: Path | None = None) -> dict[str, str]:
    """A bare environment: ``PATH``, a UTF-8 locale, a dumb terminal (and ``HOME``)."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8", "TERM": "dumb"}
    if home is not None:
        env["HOME"] = str(home)
    return env


def distribution_version(executable: str, distribution: str) -> str | None:
    """The version of ``distribution`` in the Python that runs the script ``executable``."""
    try:
        with Path(executable).open("rb") as script:
            first = script.readline(500).decode(errors="replace")
    except OSError:
        return None
    if not first.startswith("#!") or "python" not in first:
        return None
    interpreter = first[2:].split()
    code = "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))"
    answer = probe([*interpreter, "-c", code, distribution], env=quiet_env())
    return version_in(answer.text) if answer.ok else None


def version_in(text: str) -> str | None:
    """The first version number in ``text`` (``2.43.0``, ``1.0.3-beta``), if any."""
    match = _VERSION.search(text)
    return match.group(0) if match else None
