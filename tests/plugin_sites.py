"""A toy plugin and installing a distribution on a site directory (conftest.py's ``site``) as an
installer would."""

from __future__ import annotations

import textwrap
from pathlib import Path

TOY_PLUGIN = """
from pydantic import BaseModel, ConfigDict

from bugbout import MinerPlugin, hookimpl
from bugbout.core.store.records import TaskSet


class ToyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    examined: int = 42


class ToyMiner:
    def __init__(self, options):
        self.options = options

    def mine(self, request, titles=None, runner=None):
        return TaskSet(examined=self.options.examined, excluded={"toy": self.options.examined})


@hookimpl
def bugbout_miners():
    yield MinerPlugin(name="toy", factory=ToyMiner, options=ToyOptions, description="a toy miner")
"""


def install_distribution(site: Path, name: str, version: str, entry_points: dict[str, str],
                         modules: dict[str, str]) -> None:  # fmt: skip
    """Put a distribution on ``site`` as an installer would: a dist-info and its modules."""
    dist_info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    )
    lines = "".join(f"{key} = {value}\n" for key, value in entry_points.items())
    (dist_info / "entry_points.txt").write_text(f"[bugbout]\n{lines}")
    for module, source in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(source))
