"""Ground truth repairs its environment: a module the tests import but the project never
declared is added, once, and recorded; with the repair off, the reason names the module
and the setting. Run by the current interpreter, with a builder that installs from a
local package directory (never PyPI)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bugbout.core.contract.settings import BoutSettings, ProjectSettings, TasksSettings
from bugbout.core.plumbing.environments import repair
from bugbout.core.plumbing.environments.environment import Command, EnvironmentRequest
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.store.records import Oracle, Task, TaskIssue
from bugbout.core.truth.oracle import compute_oracle
from bugbout.plugins.environments.interpreter import InterpreterBuilder, InterpreterEnvironment
from bugbout.testing import RepositoryBuilder
from runners import pytest_runner

CORE = "def half(x):\n    return x / 2\n"
FIXED = "def half(x):\n    return x // 2\n"
TESTS = (
    "from tests.base import dumps\nfrom pkg.core import half\n\n\n"
    "def test_half():\n    assert dumps(half(3)) == '1'\n"
)
BASE = "import simplejson\n\n\ndef dumps(value):\n    return simplejson.dumps(value)\n"


@pytest.mark.parametrize(
    ("module", "distribution"),
    [
        ("yaml", "PyYAML"),
        ("dateutil.parser", "python-dateutil"),
        ("PIL.Image", "Pillow"),
        ("google.protobuf.message", "protobuf"),
        ("pkg_resources", "setuptools"),
        ("simplejson", "simplejson"),
        ("typing_inspect", "typing-inspect"),
    ],
)
def test_an_import_maps_to_its_distribution(module: str, distribution: str) -> None:
    assert repair.distribution(module) == distribution


@dataclass
class LocalPackages:
    """An environment builder that "installs" a test dependency found in a directory of
    packages by putting it on ``PYTHONPATH``; records every request."""

    packages: Path
    requests: list[tuple[str, ...]] = field(default_factory=list)

    def build(self, request: EnvironmentRequest) -> _Installed:
        self.requests.append(request.project.test_dependencies)
        base = InterpreterBuilder().build(request)
        paths = [
            self.packages / name
            for name in request.project.test_dependencies
            if (self.packages / name).is_dir()
        ]
        return _Installed(base, paths)


@dataclass
class _Installed:
    base: InterpreterEnvironment
    paths: list[Path]

    @property
    def description(self) -> str:
        return self.base.description

    @property
    def key(self) -> str:
        return self.base.key + ",".join(p.name for p in self.paths)

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        return self.base.command(args, tree, [*extra_paths, *self.paths])


def _project(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Task, LocalPackages]:
    repo = RepositoryBuilder(tmp_path / "repo")
    parent = repo.commit(
        "Initial",
        {"pkg/__init__.py": "", "pkg/core.py": CORE, "tests/__init__.py": "", **files},
    )
    sha = repo.commit("Fix half (#1)", {"pkg/core.py": FIXED, "tests/test_half.py": TESTS})
    task = Task(
        id=sha[:12], sha=sha, parent=parent, date="2024-01-01T00:00:00+00:00", title="Fix",
        issue=TaskIssue(number=1), source_files=["pkg/core.py"],
        test_files=["tests/test_half.py"], changed_test_files=["tests/test_half.py"],
    )  # fmt: skip
    packages = tmp_path / "packages"
    (packages / "simplejson" / "simplejson").mkdir(parents=True)
    (packages / "simplejson" / "simplejson" / "__init__.py").write_text("dumps = str\n")
    return repo.path, task, LocalPackages(packages)


def _oracle(repo: Path, task: Task, builder: LocalPackages, home: Path, **tasks: bool) -> Oracle:
    settings = BoutSettings(
        project=ProjectSettings(source="pkg", tests="tests"),
        tasks=TasksSettings(**tasks),  # type: ignore[arg-type]
        root=repo,
    )
    with Git(repo) as git:
        return compute_oracle(
            task, git=git, builder=builder, runner=pytest_runner(),
            project=settings.project, tasks=settings.tasks, home=home,
            key="k",
            confine=lambda argv, tree, writable: argv,
        )  # fmt: skip


@pytest.mark.slow
def test_an_undeclared_test_import_is_added_and_recorded(tmp_path: Path) -> None:
    repo, task, builder = _project(tmp_path, {"tests/base.py": BASE})
    home = tmp_path / "home"
    oracle = _oracle(repo, task, builder, home)
    assert oracle.status == "ok", oracle.reason
    assert oracle.fail_to_pass == ["tests/test_half.py::test_half"]
    assert [a.note for a in oracle.added] == [
        "added simplejson: imported by tests/base.py, not declared as a test dependency"
    ]
    assert builder.requests == [("pytest",), ("pytest", "simplejson")]  # one retry


@pytest.mark.slow
def test_with_the_repair_off_the_reason_names_the_module_and_the_setting(
    tmp_path: Path,
) -> None:
    repo, task, builder = _project(tmp_path, {"tests/base.py": BASE})
    oracle = _oracle(repo, task, builder, tmp_path / "home", repair_imports=False)
    assert oracle.status == "environment-error"
    assert oracle.added == []
    assert builder.requests == [("pytest",)]
    assert oracle.reason is not None
    assert "\n" not in oracle.reason
    assert (
        "simplejson is imported by tests/base.py but not installed: add simplejson to "
        "project.test-dependencies, or set tasks.repair-imports=true to add it"
    ) in oracle.reason


@pytest.mark.slow
def test_a_conftest_that_cannot_import_is_named_by_its_path_in_the_tree(tmp_path: Path) -> None:
    conftest = "import simplejson  # noqa\n"
    repo, task, builder = _project(tmp_path, {"tests/conftest.py": conftest, "tests/base.py": ""})
    home = tmp_path / "home"
    off = _oracle(repo, task, builder, home, repair_imports=False)
    assert off.status == "environment-error"
    assert off.reason is not None
    assert str(home) not in off.reason, off.reason  # the scratch directory is gone
    assert "tests/conftest.py" in off.reason
    assert "set tasks.repair-imports=true" in off.reason
    builder.requests.clear()
    on = _oracle(repo, task, builder, home)
    assert [a.requirement for a in on.added] == ["simplejson"]
    assert builder.requests == [("pytest",), ("pytest", "simplejson")]


@pytest.mark.slow
def test_the_project_own_modules_are_never_repaired(tmp_path: Path) -> None:
    """A test module importing a module of the package that the fix adds fails before it:
    that is the bug, not a missing dependency."""
    repo = RepositoryBuilder(tmp_path / "repo")
    parent = repo.commit("Initial", {"pkg/__init__.py": "", "pkg/core.py": CORE})
    sha = repo.commit(
        "Add helper (#2)",
        {
            "pkg/helper.py": "def one():\n    return 1\n",
            "tests/test_helper.py": "from pkg.helper import one\n\n\n"
            "def test_one():\n    assert one() == 1\n",
        },
    )
    task = Task(
        id=sha[:12], sha=sha, parent=parent, date="2024-01-01T00:00:00+00:00", title="Fix",
        issue=TaskIssue(number=2), source_files=["pkg/helper.py"],
        test_files=["tests/test_helper.py"], changed_test_files=["tests/test_helper.py"],
    )  # fmt: skip
    builder = LocalPackages(tmp_path / "packages")
    oracle = _oracle(repo.path, task, builder, tmp_path / "home")
    assert oracle.status == "ok", oracle.reason
    assert oracle.fail_to_pass == ["tests/test_helper.py::test_one"]
    assert oracle.added == []
    assert builder.requests == [("pytest",)]


@pytest.mark.slow
def test_node_ids_never_hold_the_scratch_path(tmp_path: Path) -> None:
    """A test whose id is a data file's absolute path is the same test before and after
    the fix, and its id names the file relative to the tree."""
    tests = (
        "from pathlib import Path\n\nimport pytest\n\nfrom pkg.core import half\n\n\n"
        "DATA = Path(__file__).parent / 'data.txt'\n\n\n"
        "@pytest.mark.parametrize('path', [pytest.param(DATA, id=str(DATA))])\n"
        "def test_half(path):\n    assert half(int(Path(path).read_text())) == 1\n"
    )
    repo = RepositoryBuilder(tmp_path / "repo")
    parent = repo.commit(
        "Initial",
        {
            "pkg/__init__.py": "",
            "pkg/core.py": CORE,
            "tests/data.txt": "3",
            "tests/test_h.py": tests,
        },
    )
    sha = repo.commit("Fix half (#1)", {"pkg/core.py": FIXED, "tests/test_h.py": tests + "\n"})
    task = Task(
        id=sha[:12], sha=sha, parent=parent, date="2024-01-01T00:00:00+00:00", title="Fix",
        issue=TaskIssue(number=1), source_files=["pkg/core.py"],
        test_files=["tests/test_h.py"], changed_test_files=["tests/test_h.py"],
    )  # fmt: skip
    home = tmp_path / "home"
    oracle = _oracle(repo.path, task, LocalPackages(tmp_path / "packages"), home)
    assert oracle.status == "ok", oracle.reason
    assert oracle.fail_to_pass == ["tests/test_h.py::test_half[tests/data.txt]"]
    assert not any(str(home) in name for run in oracle.runs for name in run.outcomes)


def test_a_tasks_test_environment_has_what_the_oracle_added_built_once(tmp_path: Path) -> None:
    from bugbout.core.plumbing.environments.environments import Environments
    from bugbout.core.store.records import AddedDependency, OracleSet
    from bugbout.core.store.store import ORACLES, Store

    store = Store(tmp_path / ".bugbout")
    task = Task(
        id="t", sha="s", parent="p", date="2024-01-01T00:00:00+00:00", title="Fix",
        issue=TaskIssue(number=1), source_files=["pkg/core.py"], test_files=["tests/test_a.py"],
    )  # fmt: skip
    simplejson = AddedDependency(requirement="simplejson", module="simplejson", imported_by="x")
    oracle = Oracle(task_id="t", status="ok", added=[simplejson])
    store.write(ORACLES, OracleSet({"t": oracle}))
    builder = LocalPackages(tmp_path / "packages")
    environments = Environments(builder, ProjectSettings(source="pkg"), store, tmp_path / "home")

    class Trees:
        def base(self, sha: str) -> Path:
            return tmp_path

    first = environments.of(task, Trees())  # type: ignore[arg-type]
    assert builder.requests == [("pytest", "simplejson")]
    assert environments.of(task, Trees()) is first  # type: ignore[arg-type]
    assert len(builder.requests) == 1  # the race, its rounds and the verdicts share it


@pytest.mark.slow
def test_the_repair_goes_on_until_the_suite_collects(tmp_path: Path) -> None:
    repo, task, builder = _project(tmp_path, {"tests/base.py": BASE})
    package = builder.packages / "simplejson" / "simplejson" / "__init__.py"
    package.write_text("import speedups\n\ndumps = speedups.dumps\n")  # what it needs in turn
    (builder.packages / "speedups").mkdir()
    (builder.packages / "speedups" / "speedups.py").write_text("dumps = str\n")
    oracle = _oracle(repo, task, builder, tmp_path / "home")
    assert oracle.status == "ok", oracle.reason
    assert [a.requirement for a in oracle.added] == ["simplejson", "speedups"]
    assert builder.requests == [
        ("pytest",),
        ("pytest", "simplejson"),
        ("pytest", "simplejson", "speedups"),
    ]


def test_the_repair_stops_when_nothing_new_can_be_added() -> None:
    missing = {"nothere": "tests/base.py"}
    first = repair.next_round(missing, [], 0)
    assert [a.requirement for a in first] == ["nothere"]
    assert repair.next_round(missing, first, 1) == []  # it did not provide the module
    assert repair.next_round({"other": "x.py"}, first, repair.ROUNDS) == []
