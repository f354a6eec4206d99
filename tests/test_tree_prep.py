"""Ground truth's before tree made from its after tree in place, and turned back: one
export per task, each tree exactly what its export would be, and a before run that
writes in the tree never leaks into the after runs."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from bugbout.core.contract.settings import BoutSettings
from bugbout.core.plumbing.trees.built_files import export_built
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.plumbing.trees.tree_turn import snapshot
from bugbout.core.store.records import Oracle, Task, TaskIssue
from bugbout.core.truth import oracle
from bugbout.core.truth.oracle import export_before
from bugbout.testing import RepositoryBuilder
from history import calc_settings, ground_truth

BASE = {
    "pyproject.toml": '[project]\nname = "calc"\nrequires-python = ">=3.9"\n',
    ".gitattributes": "*.txt eol=crlf\n",
    "src/calc/__init__.py": "",
    "src/calc/ops.py": "def add(a, b):\n    return a - b\n",
    "src/calc/old.py": "OLD = 1\n",
    "src/calc/shape": "a file that the fix makes a package\n",
    "src/calc/run.sh": "#!/bin/sh\n",
    "src/calc/notes.txt": "line one\nline two\n",
    "tests/test_ops.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 1)\n",
    "tests/test_gone.py": "def test_gone():\n    pass\n",
}


def _fix(repo: RepositoryBuilder) -> tuple[str, str]:
    """A fix that changes every kind of thing a tree can hold; its parent and itself."""
    parent = repo.commit("Initial commit", BASE)
    repo.remove(["src/calc/old.py", "src/calc/shape", "tests/test_gone.py"])
    (repo.path / "src/calc/run.sh").chmod(0o755)
    sha = repo.commit(
        "Fix add (#1)",
        {
            "src/calc/ops.py": "def add(a, b):\n    return a + b\n",
            "src/calc/fresh/deep/mod.py": "NEW = 2\n",
            "src/calc/shape/__init__.py": "",
            "src/calc/notes.txt": "line one\nline two, fixed\n",
            "tests/test_ops.py": BASE["tests/test_ops.py"] + "\n\ndef test_more():\n    pass\n",
            "tests/data/case.txt": "data\n",
        },
    )
    return parent, sha


def _task(parent: str, sha: str) -> Task:
    return Task(
        id=sha[:12], sha=sha, parent=parent, date="2024-01-01T00:00:00+00:00", title="Fix",
        issue=TaskIssue(number=1), source_files=["src/calc/ops.py"],
        test_files=["tests/test_ops.py"],
        changed_test_files=["tests/test_ops.py", "tests/data/case.txt"],
        deleted_test_files=["tests/test_gone.py"],
    )  # fmt: skip


def _held(tree: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every entry of ``tree``: its type, whether it is executable, its bytes."""
    held = {}
    for root, folders, files in os.walk(tree):
        for name in folders + files:
            path = Path(root, name)
            info = path.lstat()
            content = path.read_bytes() if stat.S_ISREG(info.st_mode) else b""
            held[str(path.relative_to(tree))] = (
                stat.S_IFMT(info.st_mode),
                info.st_mode & 0o111 if stat.S_ISREG(info.st_mode) else 0,
                content,
            )
    return held


@pytest.fixture
def turned(tmp_path: Path) -> tuple[Git, Task, Path, tuple[object, ...]]:
    repo = RepositoryBuilder(tmp_path / "repo")
    task = _task(*_fix(repo))
    git = Git(repo.path)
    export_built(git, task.sha, tmp_path / "after")
    exported = snapshot(tmp_path / "after")
    found = oracle._before_from_after(git, task, tmp_path / "after", tmp_path / "tree", exported)
    assert found is not None, "the turn was not made"
    yield git, task, tmp_path / "tree", found
    git.close()


def test_the_turned_trees_are_what_their_exports_are(
    turned: tuple[Git, Task, Path, tuple[object, ...]], tmp_path: Path
) -> None:
    git, task, tree, found = turned
    export_before(git, task, tmp_path / "before-export")
    export_built(git, task.sha, tmp_path / "after-export")
    before = _held(tree)
    assert before == _held(tmp_path / "before-export")
    assert "src/calc/fresh" not in before  # the fix's new package: not even its folder
    assert before["src/calc/notes.txt"][2] == b"line one\r\nline two\r\n"  # as git wrote it
    assert oracle._after_again(git, task, tree, *found)  # type: ignore[arg-type]
    assert _held(tree) == _held(tmp_path / "after-export")


@pytest.mark.parametrize(
    "meddling",
    ["writes a file", "rewrites a file, its time put back", "makes a file executable"],
)
def test_a_before_tree_its_runs_changed_is_not_turned_back(
    turned: tuple[Git, Task, Path, tuple[object, ...]], meddling: str
) -> None:
    git, task, tree, found = turned
    ops = tree / "src/calc/ops.py"
    if meddling == "writes a file":
        (tree / "tests" / "leftover.txt").write_text("x")
    elif meddling == "makes a file executable":
        ops.chmod(0o755)
    else:
        times = ops.stat()
        ops.write_text(ops.read_text().replace("-", "*"))
        os.utime(ops, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert not oracle._after_again(git, task, tree, *found)  # type: ignore[arg-type]


def test_files_that_came_and_went_leave_the_tree_turned_back(
    turned: tuple[Git, Task, Path, tuple[object, ...]],
) -> None:
    git, task, tree, found = turned
    canary = tree / "tests" / "test_canary.py"  # as a run's canaries do
    canary.write_text("def test_it():\n    pass\n")
    canary.unlink()
    assert oracle._after_again(git, task, tree, *found)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "changed",
    [
        {"pyproject.toml": BASE["pyproject.toml"].replace('"calc"', '"calc"\nversion = "2"')},
        {"src/calc/.gitattributes": "*.py eol=crlf\n"},  # how git writes the files kept
    ],
)
def test_a_fix_that_changes_how_the_tree_is_written_is_exported_whole(
    tmp_path: Path, changed: dict[str, str]
) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    parent = repo.commit("Initial commit", BASE)
    sha = repo.commit(
        "Fix add (#1)", {**changed, "src/calc/ops.py": "def add(a, b):\n    return a + b\n"}
    )
    task = _task(parent, sha).model_copy(
        update={"changed_test_files": [], "deleted_test_files": []}
    )
    with Git(repo.path) as git:
        export_built(git, sha, tmp_path / "after")
        exported = snapshot(tmp_path / "after")
        after, tree = tmp_path / "after", tmp_path / "tree"
        assert oracle._before_from_after(git, task, after, tree, exported) is None
        assert (tmp_path / "after").is_dir()  # left for the after runs
        export_before(git, task, tmp_path / "before-export")
        assert _held(tmp_path / "tree") == _held(tmp_path / "before-export")


@pytest.mark.parametrize("writer", ["setup.py's run", "the environment's build"])
def test_an_after_tree_written_in_since_its_export_is_not_turned(
    tmp_path: Path, writer: str
) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    task = _task(*_fix(repo))
    after, tree = tmp_path / "after", tmp_path / "tree"
    with Git(repo.path) as git:
        export_built(git, task.sha, after)
        exported = snapshot(after)
        if writer == "setup.py's run":  # a module generated from the fixed code
            (after / "src/calc/_built.py").write_text("def add(a, b):\n    return a + b\n")
        else:
            (after / "src/calc/ops.py").chmod(0o700)
        assert oracle._before_from_after(git, task, after, tree, exported) is None
        assert after.is_dir()  # left for the after runs
        export_before(git, task, tmp_path / "before-export")
        assert _held(tree) == _held(tmp_path / "before-export")


LEAKS = """\
import importlib.util
import pathlib


def test_nothing_left_from_before():
    mark = pathlib.Path(__file__).with_name("leftover.txt")
    side = "after" if importlib.util.find_spec("calc.fixed") else "before"
    if side == "after":
        assert not (mark.exists() and mark.read_text() == "before"), "the before runs leaked"
    mark.write_text(side)
"""


def _computed(settings: BoutSettings, monkeypatch: pytest.MonkeyPatch) -> tuple[Oracle, list[str]]:
    """The oracle of the one task of ``settings``' repository (:func:`history.ground_truth`)
    and the commits whose whole tree was exported while it was computed."""
    exports: list[str] = []
    real = Git.export

    def export(self: Git, rev: str, destination: Path, paths: object = None) -> None:
        if paths is None:
            exports.append(rev)
        real(self, rev, destination, *([] if paths is None else [paths]))  # type: ignore[arg-type]

    monkeypatch.setattr(Git, "export", export)
    (found,) = ground_truth(settings).root.values()
    return found, exports


@pytest.mark.slow
def test_ground_truth_exports_once_and_a_before_run_s_writes_never_reach_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": BASE["pyproject.toml"],
            "src/calc/__init__.py": "",
            "tests/test_writes.py": LEAKS,
        },
    )
    fix = repo.commit(
        "Add fixed (#2)",
        {
            "src/calc/fixed.py": "def fixed():\n    return 1\n",
            "tests/test_fixed.py": "from calc.fixed import fixed\n\n\n"
            "def test_fixed():\n    assert fixed() == 1\n",
            "tests/test_writes.py": f"# run by the task\n{LEAKS}",
        },
    )
    found, exports = _computed(calc_settings(repo.path), monkeypatch)
    assert found.status == "ok", found.reason
    assert found.fail_to_pass == ["tests/test_fixed.py::test_fixed"]
    assert "tests/test_writes.py::test_nothing_left_from_before" in found.pass_to_pass
    # the after tree, then again after the before runs wrote in the tree they shared
    assert exports == [fix, fix]


@pytest.mark.slow
def test_ground_truth_of_a_fix_whose_runs_write_nothing_exports_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial commit",
        {"pyproject.toml": BASE["pyproject.toml"], "src/calc/__init__.py": ""},
    )
    fix = repo.commit(
        "Add fixed (#2)",
        {
            "src/calc/fixed.py": "def fixed():\n    return 1\n",
            "tests/test_fixed.py": "from calc.fixed import fixed\n\n\n"
            "def test_fixed():\n    assert fixed() == 1\n",
        },
    )
    found, exports = _computed(_turning(calc_settings(repo.path)), monkeypatch)
    assert found.status == "ok", found.reason
    assert found.fail_to_pass == ["tests/test_fixed.py::test_fixed"]
    assert exports == [fix]  # the before tree was turned from it, and turned back


def _turning(settings: BoutSettings) -> BoutSettings:
    """``settings`` whose runs write nothing in their tree when the tests do not (the
    before tree is then turned back into the after tree, not exported again):
    pytest-benchmark, in this interpreter, makes a folder in the tree it runs in."""
    project = settings.project.model_copy(update={"pytest_args": ("-p", "no:benchmark")})
    return settings.model_copy(update={"project": project})


GENERATED = (
    "open('src/calc/_built.py', 'w').write(open('src/calc/ops.py').read())  # a build step\n"
    "from setuptools import setup\nsetup(name='calc', version='1', tests_require=[])\n"
)
BUILT_FIRST = (
    "try:\n    from calc._built import add\nexcept ImportError:\n    from calc.ops import add\n"
)


@pytest.mark.slow
def test_what_setup_py_writes_in_the_after_tree_never_reaches_the_before_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """setup.py runs (for its test dependencies) in the after tree before the before tree
    is made: a module it generates from the fixed code must not be turned into the before
    tree, where it would make the fix's test pass before the fix."""
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "calc"\nversion = "1"\n',
            ".gitignore": "_built.py\n",
            "setup.py": GENERATED,
            "src/calc/__init__.py": BUILT_FIRST,
            "src/calc/ops.py": "def add(a, b):\n    return a - b\n",
        },
    )
    repo.commit(
        "Fix add (#1)",
        {
            "src/calc/ops.py": "def add(a, b):\n    return a + b\n",
            "tests/test_ops.py": (
                "from calc import add\n\n\ndef test_add():\n    assert add(1, 1) == 2\n"
            ),
        },
    )
    found, _ = _computed(_turning(calc_settings(repo.path)), monkeypatch)
    assert found.status == "ok", found.reason
    assert found.fail_to_pass == ["tests/test_ops.py::test_add"]


LOCKS = (
    "import os\nfrom calc.ops import add\n\n\ndef test_locks():\n"
    "    if add(1, 1) != 2:  # the unfixed code locks the folder it runs in\n"
    "        os.chmod('.', 0o555)\n"
)
WRITES = (
    "import os\nfrom calc.ops import add\n\n\ndef test_add():\n"
    "    with open('scratch.txt', 'w') as f:\n        f.write('x')\n    os.remove('scratch.txt')\n"
    "    assert add(1, 1) == 2\n"
)


@pytest.mark.slow
def test_a_before_run_that_changes_the_tree_s_own_folder_never_reaches_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "calc"\nversion = "1"\n',
            "src/calc/__init__.py": "",
            "src/calc/ops.py": "def add(a, b):\n    return a - b\n",
            "tests/test_zlocks.py": LOCKS,
        },
    )
    repo.commit(
        "Fix add (#1)",
        {
            "src/calc/ops.py": "def add(a, b):\n    return a + b\n",
            "tests/test_ops.py": WRITES,
            "tests/test_zlocks.py": f"{LOCKS}\n# run by the task\n",
        },
    )
    found, _ = _computed(_turning(calc_settings(repo.path)), monkeypatch)
    assert found.status == "ok", found.reason
    assert found.fail_to_pass == ["tests/test_ops.py::test_add"]
