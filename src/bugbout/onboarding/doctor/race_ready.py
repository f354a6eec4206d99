"""Doctor's checks that each contestant can race as ``bugbout run`` will start it: what
the bout itself checks before it spends (its program, its vendor's key:
:mod:`bugbout.onboarding.readiness`), and the files its command line names that the sandbox would
hide from it (a script in your HOME, in the repository or in the store), so that doctor
never passes a contestant that ``run`` refuses or that cannot start inside the sandbox."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings
from bugbout.core.plumbing.confinement.confine import masked_paths, readable_paths
from bugbout.core.plumbing.runtime.home import bugbout_home
from bugbout.core.race.contestants import Contestant
from bugbout.onboarding.doctor.check import Check
from bugbout.onboarding.doctor.clis import build_contestant, dummy_session, selected_agents
from bugbout.onboarding.readiness import problem


def race_checks(settings: BoutSettings, plugins: Plugins) -> Iterator[Check]:
    """For each contestant and examiner that builds: whether ``bugbout run`` would race
    it, and whether the sandbox hides a file its command names."""
    for role, name, entry in selected_agents(settings):
        contestant, _ = build_contestant(settings, plugins, role, name, entry)
        if contestant is None:
            continue  # its settings are wrong: the contestant checks say so
        refused = problem(contestant)
        yield Check(
            f"{name} can race",
            refused is None,
            refused or "`bugbout run` accepts it (its program, and its vendor's key if needed)",
            None if refused is None else refused.split(": ", 1)[-1],
        )
        if refused is not None:
            continue  # without its program or key there is no command line to look at
        hidden = hidden_files(settings, contestant)
        if hidden:
            yield Check(
                f"{name} in the sandbox",
                False,
                f"its command names {hidden[0]}, which the sandbox hides from agents (it "
                "lies in your HOME, the repository or the store)",
                "move it outside those (e.g. under /opt or /usr/local) and name it there",
            )


def hidden_files(settings: BoutSettings, contestant: Contestant) -> list[Path]:
    """The existing files ``contestant``'s command line names (absolute, or relative to
    the project) that its sandbox will not show it."""
    agent = contestant.agent
    with tempfile.TemporaryDirectory(prefix="bugbout-doctor-") as scratch:
        argv = agent.invocation(dummy_session(Path(scratch))).argv
    if not getattr(agent.options, "sandboxed", True):
        return []
    masked = masked_paths(settings.repository, settings.store_dir, bugbout_home())
    shown = readable_paths([agent.executable or ""])
    found = []
    for part in argv:
        path = Path(part) if Path(part).is_absolute() else settings.repository / part
        if not part or part.startswith("-") or not path.is_file():
            continue
        resolved = path.resolve()
        inside = [m for m in masked if resolved.is_relative_to(m)]
        if inside and not any(resolved.is_relative_to(r) for r in shown):
            found.append(resolved)
    return found
