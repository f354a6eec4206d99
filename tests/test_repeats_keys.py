"""Repeats are keyed: the first keeps the key every attempt had before repeats existed (a
store's attempts stay valid), each later one has its own; an examiner runs once."""

from __future__ import annotations

import json
from pathlib import Path

from bugbout.config import compose_settings
from bugbout.core.pipeline import build_contestants
from bugbout.core.race.contestants import with_repeats
from bugbout.core.race.prompt import PROMPT_VERSION
from bugbout.core.store.records import Task, TaskIssue, digest
from bugbout.core.store.store import attempt_path
from bugbout.example import build_example

TASK = Task(
    id="t", sha="0123abcd", parent="p", date="2024-01-01T00:00:00+00:00", title="Fix",
    issue=TaskIssue(number=1), source_files=["a.py"], test_files=["tests/test_a.py"],
)  # fmt: skip


def test_repeat_one_keeps_todays_key_and_the_others_have_their_own(tmp_path: Path) -> None:
    repo = build_example(tmp_path / "tally")
    settings, plugins = compose_settings(repo, ["run.repeats=3"])
    assert settings.run.repeats == 3
    racers = build_contestants(settings, plugins)
    repeated = with_repeats(racers, settings.run.repeats)
    contestants = [r for r in racers if r.role == "contestant"]
    examiners = [r for r in racers if r.role == "examiner"]
    assert len(repeated) == 3 * len(contestants) + len(examiners)
    assert {r.repeat for r in repeated if r.role == "examiner"} == {1}
    for racer in contestants:
        # the key as it was computed before repeats: task, agent settings, prompt version
        settings_key = json.dumps(racer.agent.settings_key(), sort_keys=True, default=str)
        before = digest(TASK.sha, settings_key, PROMPT_VERSION, "")
        mine = [r for r in repeated if r.name == racer.name]
        assert [r.repeat for r in mine] == [1, 2, 3]
        assert mine[0].key(TASK) == before
        assert mine[0].path(TASK) == attempt_path(TASK.id, racer.name, before)
        assert len({r.path(TASK) for r in mine}) == 3
        assert [r.label for r in mine] == [racer.name, f"{racer.name} #2", f"{racer.name} #3"]
