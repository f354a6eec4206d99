"""Before a bout spends anything: every contestant's and examiner's program is
installed, and the key of its vendor is set when it is a vendor's own agent talking to
the vendor's own API.
Otherwise the bout stops with the fix, before any agent runs (``run.keep-going`` races
the others instead)."""

from __future__ import annotations

import os
import shutil

from bugbout.core.race.agents import VENDOR_KEYS
from bugbout.core.race.contestants import Contestant


def problem(contestant: Contestant) -> str | None:
    """Why ``contestant`` cannot race on this machine, with the fix; ``None`` if it can."""
    from bugbout.onboarding.doctor.clis import install_hint

    agent, role, name = contestant.agent, contestant.role, contestant.name
    program = agent.executable
    if program and shutil.which(program) is None:
        hint = install_hint(contestant)
        return f"{role} {name!r} needs {program!r}, which is not installed: {hint}"
    # An adapter that belongs to a vendor (Codex, Claude Code, Gemini CLI) needs its key
    # unless pointed elsewhere; others (a command, mini-swe-agent) may reach any model.
    keys = VENDOR_KEYS.get(agent.default_vendor or "", ())
    own_api = not any(
        getattr(agent.options, option, None) for option in ("base_url", "local_provider")
    )
    if keys and own_api and not any(os.environ.get(key) for key in keys):
        return (
            f"{role} {name!r} ({agent.harness}) needs {' or '.join(keys)} in the environment: "
            f"export it, or point it at another endpoint with {role}.{name}.base-url"
        )
    return None


def unready(contestants: list[Contestant]) -> dict[str, str]:
    """Each contestant that cannot race here, by name, with why."""
    return {c.name: reason for c in contestants if (reason := problem(c)) is not None}
