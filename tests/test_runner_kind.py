"""The test runner as a plugin kind: chosen in the settings, keyed into ground truth when
it is not the default, and the pieces of the core that read a test id or ask the runner
for what only it knows."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice, ProjectSettings
from bugbout.core.crossexam.crossexam import plan_installation
from bugbout.core.pipeline import truth_spec
from bugbout.core.plumbing.selection.affected import BaseRun, changed_in_functions, select
from bugbout.core.plumbing.testruns.test_runner import file_of
from bugbout.core.store.race_records import ChangeArea, ChangeKind, FileChange
from bugbout.core.store.records import Outcome, RunStatus, TestRun
from runners import pytest_runner

SHA = "a" * 40


def oracle_key(settings: BoutSettings, sha: str) -> str:
    return truth_spec(settings).key(sha)


def settings(**fields: object) -> BoutSettings:
    return BoutSettings(project=ProjectSettings(source="src/pkg"), root=Path("/r"), **fields)  # type: ignore[arg-type]


def test_pytest_is_the_default_and_a_runner_is_chosen_by_name(plugins: Plugins) -> None:
    assert settings().test_runner == PluginChoice(name="pytest")
    assert plugins.create("test-runner", "pytest").style.language == "Python"
    with pytest.raises(ConfigError, match="no test-runner plugin named 'vitest'; choose one of"):
        plugins.create("test-runner", "vitest")


def test_ground_truth_keys_hold_the_runner_only_when_it_is_not_the_default() -> None:
    before = "83c80ea0663a4550"  # the key bugbout gave these settings before runners were plugins
    assert oracle_key(settings(), SHA) == before
    assert oracle_key(settings(test_runner=PluginChoice(name="pytest")), SHA) == before
    other = oracle_key(settings(test_runner=PluginChoice(name="vitest")), SHA)
    assert other != before
    optioned = PluginChoice.model_validate({"name": "vitest", "pool": "forks"})
    assert oracle_key(settings(test_runner=optioned), SHA) not in (before, other)


def test_a_test_id_s_file_is_what_comes_before_its_first_separator() -> None:
    assert file_of("tests/test_x.py::TestX::test_y[a::b]") == "tests/test_x.py"
    assert file_of("test/sum.test.ts::math > sum > adds") == "test/sum.test.ts"
    assert file_of("tests/test_x.py") == "tests/test_x.py"


class Mapless:
    """A runner whose names and files are not pytest's, and which cannot map coverage."""

    def install_as(self, original: str, author: str, number: int) -> str:
        stem = original.removesuffix(".test.ts")
        return f"{stem}.{author}{number}.test.ts"

    def changed_functions(self, path: str, before: str, after: str) -> frozenset[int] | None:
        return None


def test_agents_tests_are_installed_under_the_runner_s_names(tmp_path: Path) -> None:
    written = {"codex": {"test/sum.test.ts": b"1"}, "Codex!": {"test/sum.test.ts": b"2"}}
    plan = plan_installation(written, tmp_path, Mapless())  # type: ignore[arg-type]
    assert [(m.author, m.path) for m in plan] == [
        ("codex", "test/sum.codex1.test.ts"),
        ("Codex!", "test/sum.codex_21.test.ts"),
    ]
    pytest_plan = plan_installation({"codex": {"tests/test_x.py": b"1"}}, tmp_path, pytest_runner())
    assert [m.path for m in pytest_plan] == ["tests/test_bb_codex__x.py"]


def test_a_runner_that_cannot_tell_selects_the_whole_suite(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "core.ts").write_text("export const one = 1;\n")
    diff = (
        "--- a/src/core.ts\n+++ b/src/core.ts\n@@ -1 +1 @@\n"
        "-export const one = 1;\n+export const one = 2;\n"
    )
    change = FileChange(path="src/core.ts", kind=ChangeKind.MODIFIED, area=ChangeArea.SOURCE)
    scope = changed_in_functions(tmp_path, diff, [change], Mapless())  # type: ignore[arg-type]
    assert scope == {"src/core.ts": None}
    run = TestRun(
        label="baseline",
        status=RunStatus.OK,
        outcomes={"test/sum.test.ts::sum > adds": Outcome.PASSED},
    )
    selection = select(BaseRun(task_id="t", run=run), scope, suite=("test",))
    assert selection.targets == ("test",)
    assert selection.everything == "the base run left no coverage map"
