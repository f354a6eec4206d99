"""Mining, records and checkouts with hostile file names: every fix is found with exactly
its own tests, read from its own blobs, and the names survive the store and the trees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import name_history
from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.mine.mining import MiningRequest
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.git import Git, GitError
from bugbout.core.store.records import Task, TaskSet
from bugbout.core.store.store import ORACLES, TASKS, Store
from bugbout.core.truth.oracle import export_before
from bugbout.plugins.miners.git_history import GitHistoryMiner, GitHistoryOptions
from bugbout.testing import RepositoryBuilder
from history import calc_settings

Fixes = list[name_history.Fix]


@pytest.fixture(scope="module")
def names_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Fixes]:
    path = tmp_path_factory.mktemp("names") / "repo"
    return path, name_history.build(path)


def mine(repo: Path) -> TaskSet:
    request = MiningRequest(
        repository=repo,
        project=ProjectSettings(source="src/calc", tests="tests"),
    )
    return GitHistoryMiner(GitHistoryOptions(limit=100)).mine(request)


def test_every_fix_is_mined_with_exactly_its_own_tests(
    names_repo: tuple[Path, Fixes],
) -> None:
    repo, fixes = names_repo
    found = mine(repo)
    assert [(t.sha, t.test_files, t.added_tests) for t in found.tasks] == [
        (fix.sha, [fix.name], [fix.test]) for fix in reversed(fixes)
    ]
    assert [task.title for task in found.tasks] == [
        f"Fix f{number} returning nothing (#{number})" for number in range(len(fixes), 0, -1)
    ]
    assert all(task.changed_test_files == task.test_files for task in found.tasks)
    assert all(task.source_files == ["src/calc/ops.py"] for task in found.tasks)


def test_a_renamed_module_is_compared_with_its_old_version(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    old, new = "tests/test_old\nname.py", "tests/test_new\tname \udcff.py"
    tests = [name_history.module(n) for n in range(1, 11)]
    repo.commit("Initial", {"src/calc/a.py": "A = 0\n", old: "".join(tests)})
    sha = repo.commit(
        "Fix A (#1)",
        {"src/calc/a.py": "A = 1\n", new: "".join(tests) + name_history.module(11)},
        remove=[old],
    )
    [task] = mine(repo.path).tasks
    assert (task.sha, task.added_tests) == (sha, [f"{new}::test_fix_11"])
    assert (task.test_files, task.deleted_test_files) == ([new], [old])


def test_blobs_are_found_by_exact_name(names_repo: tuple[Path, Fixes]) -> None:
    repo, fixes = names_repo
    with Git(repo) as git:
        for fix in fixes:
            assert git.blob(fix.sha, fix.name) == (_blob_id(repo, fix.content), fix.content)
        newest = fixes[-1].sha
        assert git.blob(newest, name_history.NAMES[0].replace("\n", "")) is None
        assert git.blob(newest, "tests") is None  # a tree, not a blob
        assert git.blob(newest, "tests/sub\ndir") is None
        assert git.blob(newest, "tests/test_base.py") is not None  # still in step


def test_blobs_are_read_in_one_batch_in_step(names_repo: tuple[Path, Fixes]) -> None:
    """Many ids asked at once (more than one round of requests), a missing one and a tree
    among them: each gets its own content or ``None``, and the batch stays in step."""
    repo, fixes = names_repo
    ids = {_blob_id(repo, fix.content): fix.content for fix in fixes}
    tree = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", f"{fixes[-1].sha}^{{tree}}"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    missing = "0123456789" * 4
    padding = [f"{n:040x}" for n in range(1, 700)]  # absent: pushes past one round
    with Git(repo) as git:
        found = git.contents([*padding, missing, *ids, tree, *ids])
        assert {i: found[i] for i in ids} == ids
        assert found[missing] is None and found[tree] is None
        assert all(found[i] is None for i in padding)
        assert git.blob(fixes[0].sha, fixes[0].name) == (
            _blob_id(repo, fixes[0].content),
            fixes[0].content,
        )
        with pytest.raises(GitError, match="not an object id"):
            git.contents(["HEAD:tests/x.py"])


def test_trees_list_exactly_what_ls_tree_lists(names_repo: tuple[Path, Fixes]) -> None:
    """Walking a commit's trees through the batch gives every file ``git ls-tree -r``
    gives, hostile names exact, with its blob id; a missing id lists nothing."""
    repo, fixes = names_repo
    listing = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "-z", fixes[-1].sha],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    expected = set()
    for entry in filter(None, listing.split(b"\0")):
        header, name = entry.split(b"\t", 1)
        expected.add((name, header.split()[2].decode()))
    found = set()
    with Git(repo) as git:
        pending = [(b"", git.tree(fixes[-1].sha))]
        while pending:
            prefix, tree = pending.pop()
            assert tree is not None
            for entry in git.trees([tree])[tree]:
                path = prefix + entry.name
                if entry.is_tree:
                    pending.append((path + b"/", entry.object_id))
                else:
                    found.add((path, entry.object_id))
        assert git.trees(["0" * 40]) == {"0" * 40: ()}
        assert git.tree("0" * 40) is None
    assert found == expected


def _blob_id(repo: Path, content: bytes) -> str:
    return (
        subprocess.run(
            ["git", "-C", str(repo), "hash-object", "--stdin"],
            input=content,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )


def test_names_round_trip_through_the_store(names_repo: tuple[Path, Fixes], tmp_path: Path) -> None:
    repo, _ = names_repo
    found = mine(repo)
    store = Store(tmp_path / ".bugbout")
    path = store.write(TASKS, found)
    text = path.read_bytes().decode("utf-8")  # valid UTF-8 whatever the names
    # not text: marked (a NUL), backslashes doubled, the bytes as \xNN
    assert "\\u0000tests/test_\\\\xff\\\\xfeweird.py" in text
    plain = json.loads(text)["tasks"]
    files = {name for task in plain for name in task["test_files"]}
    assert files == {*name_history.NAMES, name_history.PLAIN} - {name_history.NON_UTF8} | {
        "\0" + name_history.NON_UTF8.replace("\udcff\udcfe", "\\xff\\xfe")
    }  # every name that is text as it is, backslashes and all
    assert store.read(TASKS, TaskSet) == found


@pytest.mark.parametrize(
    "name",
    [
        *name_history.NAMES,
        "plain.py",
        "\\",
        "\\\\x",
        "\\xff",
        os.fsdecode(b"\x80\\\xc3"),
        "\udcc3\udca9",  # the bytes of "é", split: must not come back as "é"
    ],
)
def test_file_name_text_is_exact_and_utf8(name: str) -> None:
    from bugbout.core.store.filenames import from_text, to_text

    text = to_text(name)
    text.encode("utf-8")
    assert from_text(text) == name
    plain = "\\" not in name and not any("\udc80" <= char <= "\udcff" for char in name)
    assert (text == name) == plain


def test_a_lone_backslash_in_an_escaped_name_is_an_error(tmp_path: Path) -> None:
    store = Store(tmp_path / ".bugbout")
    store.ensure()
    task = Task(
        id="x", sha="a", parent="b", date="d", title="t", issue={"number": 1},
        source_files=[], test_files=["tests/test_a.py", "tests/test_\udcff.py"],
    )  # fmt: skip
    store.write(TASKS, TaskSet(tasks=[task]))
    tasks_json = store.path(TASKS)
    tasks_json.write_text(tasks_json.read_text().replace("test_a.py", "test_\\\\q.py"))
    assert store.read(TASKS, TaskSet).tasks[0].test_files[0] == "tests/test_\\q.py"  # type: ignore[union-attr]
    tasks_json.write_text(tasks_json.read_text().replace("\\\\xff", "\\\\q"))
    with pytest.raises(Exception, match="corrupt"):
        store.read(TASKS, TaskSet)


def test_trees_hold_the_exact_names(names_repo: tuple[Path, Fixes], tmp_path: Path) -> None:
    repo, fixes = names_repo
    found = {task.sha: task for task in mine(repo).tasks}
    with Git(repo) as git:
        base = Checkouts(git, tmp_path / "cache").base(fixes[-1].sha)
        latest = {fix.name: fix.content for fix in fixes}
        assert {name: (base / name).read_bytes() for name in latest} == latest
        for fix in fixes:
            before = tmp_path / f"before-{fix.sha[:12]}"
            export_before(git, found[fix.sha], before)
            assert (before / fix.name).read_bytes() == fix.content


def test_a_message_that_is_not_utf8_is_stored(tmp_path: Path) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/calc/__init__.py": "", "src/calc/a.py": "A = 0\n"})
    repo.commit(
        "Fix crash (#3)",
        {"src/calc/a.py": "A = 1\n", "tests/test_a.py": "def test_a():\n    pass\n"},
    )
    sha = _replace_message(repo.path, b"Fix caf\xe9 crash (#3)\n\nthe body \xff\n")
    store = Store(tmp_path / ".bugbout")
    found = mine_tasks(calc_settings(repo.path), make_plugins(entry_points=False), store)
    assert [task.sha for task in found.tasks] == [sha]
    assert found.tasks[0].title == "Fix caf\ufffd crash (#3)"
    assert store.read(TASKS, TaskSet) == found


def test_a_log_read_in_many_pieces_gives_every_commit_exactly(tmp_path: Path) -> None:
    """The log arrives as git writes it, a pipe's buffer at a time: records (messages and
    changes far longer than a piece) are split exactly wherever the pieces end."""
    repo = RepositoryBuilder(tmp_path / "repo")
    expected: list[tuple[str, list[str]]] = []
    for number in range(6):
        message = f"Commit {number}\n\n" + f"line {number} of a long body\n" * 4000
        files = {f"src/calc/m{number}_{k:03}.py": f"X = {number}\n" for k in range(20)}
        repo.commit(message, files)
        expected.append((message.strip(), sorted(files)))
    with Git(repo.path) as git:
        commits = list(git.first_parent_log("main"))
    assert [(c.message.strip(), sorted(ch.path for ch in c.changes)) for c in commits] == (
        expected[::-1]
    )


def _replace_message(repo: Path, message: bytes) -> str:
    """Give HEAD ``message`` as raw bytes (``git commit`` would re-encode them)."""
    raw = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "commit", "HEAD"], capture_output=True, check=True
    ).stdout
    headers = raw.split(b"\n\n", 1)[0]
    sha = (
        subprocess.run(
            ["git", "-C", str(repo), "hash-object", "-w", "-t", "commit", "--stdin"],
            input=headers + b"\n\n" + message,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    subprocess.run(["git", "-C", str(repo), "update-ref", "HEAD", sha], check=True)
    return sha


@pytest.mark.slow
def test_ground_truth_runs_each_fix_on_its_own_module(
    names_repo: tuple[Path, Fixes], tmp_path: Path
) -> None:
    repo, fixes = names_repo
    settings = calc_settings(repo, {"limit": 100}, reruns=1)
    plugins = make_plugins(entry_points=False)
    store = Store(tmp_path / ".bugbout")
    tasks = mine_tasks(settings, plugins, store)
    oracles = compute_oracles(settings, plugins, store, tasks)
    assert {i: (o.status, o.fail_to_pass) for i, o in oracles.root.items()} == {
        fix.sha[:12]: ("ok", [_as_pytest_names(fix.test, tmp_path)]) for fix in fixes
    }
    extended = oracles.root[fixes[-2].sha[:12]]
    assert extended.pass_to_pass == [f"{name_history.NAMES[0]}::test_fix_1"]
    assert store.read(ORACLES, type(oracles)) == oracles


def _as_pytest_names(test_id: str, scratch: Path) -> str:
    """``test_id`` as this pytest reports it: from 9.2 on, a backslash in a path is a ``/``."""
    if "\\" not in test_id:
        return test_id
    probe = scratch / "probe"
    (probe / "tests").mkdir(parents=True, exist_ok=True)
    (probe / "tests" / "test_a\\b.py").write_text("def test_x():\n    pass\n")
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider"],
        cwd=probe, capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    if "tests/test_a/b.py::test_x" not in listed:
        return test_id
    path, name = test_id.rsplit("::", 1)
    return f"{path.replace(chr(92), '/')}::{name}"
