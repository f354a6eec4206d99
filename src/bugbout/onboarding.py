"""What ``bugbout init`` finds on this machine: the coding agents installed, and whether
the key each needs is set, so the ``bugbout.yaml`` it writes races them as they are."""

from __future__ import annotations

import os
import shutil
from importlib import resources

from bugbout.core.agents import VENDOR_KEYS
from bugbout.core.errors import BugboutError
from bugbout.core.layout import FoundAgent
from bugbout.core.manager import Plugins


def find_agents(plugins: Plugins) -> list[FoundAgent]:
    """Each packaged contestant, with its program and key looked up here; named
    ``my-<agent>``, since a contestant defined in ``bugbout.yaml`` cannot take a packaged
    option's name."""
    found = []
    folder = resources.files("bugbout.conf") / "contestant"
    for item in sorted(folder.iterdir(), key=lambda entry: entry.name):
        if not item.name.endswith(".yaml"):
            continue
        name = item.name[: -len(".yaml")]
        try:
            agent = plugins.create("agent", name, {"name": name})
        except BugboutError as exc:  # it needs a setting no default gives (a model)
            found.append(FoundAgent(name=f"my-{name}", agent=name, problem=str(exc).split(":")[0]))
            continue
        program = agent.executable or ""
        keys = VENDOR_KEYS.get(agent.vendor or "", ())
        if not shutil.which(program):
            problem = f"`{program}` is not installed"
        elif not any(os.environ.get(key) for key in keys):
            problem = f"{' or '.join(keys)} is not set"
        else:
            problem = ""
        found.append(FoundAgent(name=f"my-{name}", agent=name, problem=problem))
    return found
