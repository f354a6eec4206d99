"""Test runs that never started, under bubblewrap for real: a sandbox that cannot set up
or an interpreter that is not there is the machine's failure (tried again, then
TestRunNotStarted), never an outcome; code under test that exits the same way after
pytest started is an outcome like any other."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice, ProjectSettings
from bugbout.core.plumbing.confinement import confine as confinement
from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.plumbing.environments.environment import Command, Environment, EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import RunStatus

pytestmark = pytest.mark.requires("bubblewrap")

PROJECT = ProjectSettings(source="pkg", tests="tests")
PASSING = "def test_passes():\n    pass\n"


@pytest.fixture
def environment(plugins: Plugins, tmp_path: Path) -> Environment:
    builder = plugins.create("environment", "interpreter")
    request = EnvironmentRequest(project=PROJECT, tree=tmp_path, home=tmp_path / "home")
    return builder.build(request)  # type: ignore[no-any-return]


@pytest.fixture
def bubblewrap(plugins: Plugins, tmp_path: Path) -> Confine:
    """How the bout confines test runs with ``sandbox=bubblewrap``."""
    sandbox = plugins.create("sandbox", "bubblewrap")
    assert sandbox.problem() is None
    settings = BoutSettings(
        project=PROJECT, sandbox=PluginChoice(name="bubblewrap"), root=tmp_path / "repo"
    )
    return confinement.test_confinement(
        settings.limits.tests,
        sandbox,
        tmp_path / "home",
        confinement.masked_paths(settings.repository, settings.store_dir, tmp_path / "home"),
    )


class Elsewhere:
    """An environment whose interpreter is ``python`` (wherever that is)."""

    def __init__(self, environment: Environment, python: str) -> None:
        self.environment, self.python = environment, python

    @property
    def description(self) -> str:
        return f"elsewhere: {self.python}"

    @property
    def key(self) -> str:
        return self.python

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        command = self.environment.command(args, tree, extra_paths)
        return command.model_copy(update={"argv": [self.python, *command.argv[1:]]})


def tree_with(tmp_path: Path, files: dict[str, str]) -> Path:
    tree = tmp_path / "tree"
    for name, text in files.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(textwrap.dedent(text))
    return tree


def run(environment: Environment, tree: Path, confine: Confine) -> RunStatus:
    found = run_tests(
        environment, tree, ["tests"], project=PROJECT, label="probe", timeout=60,
        confine=confine,
    )  # fmt: skip
    return found.status


def test_a_missing_interpreter_never_started(
    environment: Environment, bubblewrap: Confine, tmp_path: Path
) -> None:
    """No interpreter: no outcome. Code under test that exits 125 or 127 once bugbout's
    plugin has loaded is the code's own doing: an outcome (crashed)."""
    tree = tree_with(tmp_path, {"tests/test_a.py": PASSING})
    assert run(environment, tree, bubblewrap) == RunStatus.OK
    missing = Elsewhere(environment, str(tmp_path / "gone" / "python3"))
    with pytest.raises(BugboutError, match=r"the probe test run never started \(exit status"):
        run(missing, tree, bubblewrap)
    for code in (125, 127):
        conftest = f"import os\nos._exit({code})\n"
        exits = tree_with(tmp_path / str(code), {"tests/conftest.py": conftest, "tests/t.py": ""})
        assert run(environment, exits, bubblewrap) == RunStatus.CRASHED


def test_a_sandbox_that_cannot_set_up_never_started(
    environment: Environment, bubblewrap: Confine, tmp_path: Path
) -> None:
    """bubblewrap refuses to bind a path that is not there (``bwrap: Can't find source
    path``, exit 1): no outcome. Code under test that says the same is an outcome."""
    tree = tree_with(tmp_path, {"tests/test_a.py": PASSING})
    absent = str(tmp_path / "absent")

    def broken(argv: list[str], where: Path, writable: tuple[Path, ...]) -> list[str]:
        wrapped = bubblewrap(argv, where, writable)
        at = next(n for n, part in enumerate(wrapped) if part.endswith("/bwrap")) + 1
        return [*wrapped[:at], "--bind", absent, absent, *wrapped[at:]]

    with pytest.raises(BugboutError, match=r"never started \(exit status 1: bwrap: .*absent"):
        run(environment, tree, broken)
    loud = "import sys\nsys.stderr.write('bwrap: fake\\n')\nraise SystemExit(1)\n"
    says = tree_with(tmp_path / "loud", {"tests/conftest.py": loud, "tests/t.py": ""})
    assert run(environment, says, bubblewrap) != RunStatus.OK
