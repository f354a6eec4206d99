"""The ``predictions`` agent: patches made elsewhere, in SWE-bench's predictions format
(``{"instance_id", "model_name_or_path", "model_patch"}`` per line), replayed as a
contestant. Its attempt on a task applies the stored patch for that task and runs no
model; the patch is then cross-examined, judged, scored and audited like any other."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import Field

from bugbout.agents import (
    AgentOptions,
    AgentPlugin,
    CodingAgent,
    ConfigError,
    Invocation,
    Session,
    hookimpl,
)

APPLY = "bugbout.plugins.agents.prediction_apply"
"""The module that applies a patch from its standard input to its working directory."""


class PredictionsOptions(AgentOptions):
    """Options of the ``predictions`` agent."""

    file: Path = Field()
    """The predictions: JSON lines, or a JSON list, of ``instance_id``,
    ``model_name_or_path`` and ``model_patch``. An instance id is a task id, or ends with
    ``-`` and one (as ``bugbout export --format swe-bench`` writes them)."""


class PredictionsAgent(CodingAgent):
    """Applies the stored patch of the task it is given."""

    harness = "predictions"
    Options = PredictionsOptions
    options: PredictionsOptions

    def __init__(self, model: str | None = None, **options: object) -> None:
        super().__init__(model, **options)
        self.patches, models = read_predictions(self.options.file)
        if self.options.model is None and len(models) == 1:
            self.options = self.options.model_copy(update={"model": models.pop()})

    @property
    def executable(self) -> str:
        return sys.executable

    def invocation(self, session: Session) -> Invocation:
        patch = self.patch_for(session.task_id)
        if patch is None:  # no prediction: the attempt ends as the agent's error
            argv = [
                sys.executable,
                "-c",
                f"raise SystemExit('no prediction for task {session.task_id}')",
            ]
            return Invocation(argv, stdin="")
        return Invocation([sys.executable, "-m", APPLY], stdin=patch)

    def patch_for(self, task_id: str) -> str | None:
        """The prediction whose instance id is ``task_id`` or ends with ``-task_id``."""
        for instance, patch in self.patches.items():
            if instance == task_id or instance.endswith(f"-{task_id}"):
                return patch
        return None

    def settings_key(self) -> dict[str, Any]:
        """The file's content, not its path, determines the attempts."""
        digest = hashlib.sha256(json.dumps(self.patches, sort_keys=True).encode()).hexdigest()
        key = super().settings_key()
        key["file"] = digest[:16]
        return key


def read_predictions(path: Path) -> tuple[dict[str, str], set[str]]:
    """The patches of ``path`` by instance id, and the models named."""
    try:
        text = path.expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"predictions file {path}: {exc}; give a readable file") from None
    stripped = text.lstrip()
    try:
        rows = json.loads(text) if stripped.startswith("[") else [
            json.loads(line) for line in text.splitlines() if line.strip()
        ]  # fmt: skip
    except ValueError as exc:
        raise ConfigError(f"predictions file {path} is not JSON lines ({exc}); fix it") from None
    patches: dict[str, str] = {}
    models: set[str] = set()
    for number, row in enumerate(rows, 1):
        if not isinstance(row, dict) or not isinstance(row.get("instance_id"), str):
            raise ConfigError(f"predictions file {path}, entry {number}: no instance_id")
        patch = row.get("model_patch")
        patches[row["instance_id"]] = patch if isinstance(patch, str) else ""
        if isinstance(row.get("model_name_or_path"), str):
            models.add(row["model_name_or_path"])
    return patches, models


@hookimpl
def bugbout_agents() -> Iterator[AgentPlugin]:
    yield AgentPlugin(
        name=PredictionsAgent.harness,
        factory=PredictionsAgent.from_options,
        options=PredictionsOptions,
        description="patches made elsewhere (SWE-bench predictions JSONL), replayed",
    )
