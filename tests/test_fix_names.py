"""What a fix introduces, read as cheaply as a mining needs: the names only the fix adds
are found from the definitions it touched and checked against the parent's Python files
without grepping its whole tree, with the same answer as reading everything."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

from bugbout.core.mine import reported
from bugbout.core.mine.reported import fix_only
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.store.records import Task, TaskIssue
from bugbout.testing import RepositoryBuilder

FILLER = "".join(f"def helper_{n}(value):\n    return value + {n}\n\n\n" for n in range(400))
"""A long module's other definitions: what a fix inside one of them does not touch."""
BEFORE = '''import os


@decorated
def parse(text):
    """Parse ``text``."""
    return text.strip()


class Reader:
    def read(self, path):
        return open(path).read()

'''
AFTER = '''import os


@decorated
def parse(text):
    """Parse ``text``, as brand_new_doc says."""
    cleaned = text.strip()
    return brand_new_helper(cleaned, already_there) + "brand_new_string"


class Reader:
    def read(self, path):
        return open(path).read()

'''
OTHER = "already_there = 1\nbrand_new_helper_v1 = 2\n"


@pytest.fixture
def fix(tmp_path: Path) -> tuple[Path, Task]:
    """A fix inside one function of a long module; another module holds a name it uses,
    a data file and a longer name hold one it introduces."""
    repo = RepositoryBuilder(tmp_path / "repo")
    parent = repo.commit(
        "Start",
        {
            "src/pkg/core.py": BEFORE + FILLER,
            "src/pkg/other.py": OTHER,
            "docs/notes.txt": "brand_new_helper is planned\n",
            "tests/test_core.py": "def test_parse():\n    pass\n",
        },
    )
    sha = repo.commit(
        "Fix parsing of padded text",
        {
            "src/pkg/core.py": AFTER + FILLER,
            "tests/test_core.py": "def test_parse():\n    assert parse(' a ') == 'a'\n",
        },
    )
    task = Task(
        id=Task.id_for(sha),
        sha=sha,
        parent=parent,
        date="2024-01-01",
        title="Fix parsing of padded text",
        issue=TaskIssue(number=0),
        source_files=["src/pkg/core.py"],
        test_files=["tests/test_core.py"],
        changed_test_files=["tests/test_core.py"],
    )
    return repo.path, task


def test_the_names_only_the_fix_introduces(fix: tuple[Path, Task]) -> None:
    """Code names on added lines, less builtins and what any Python file of the parent
    holds as a whole word (not a data file's, not part of a longer word)."""
    path, task = fix
    with Git(path) as git:
        added, names = fix_only(git, task)
    assert names == {"cleaned", "brand_new_helper"}
    assert "cleaned = text.strip()" in added and "assert parse(' a ') == 'a'" in added


def test_a_fix_in_one_definition_parses_that_definition(
    fix: tuple[Path, Task], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the definitions holding the added lines are parsed, not the whole module
    (parsing whole modules cost most of a mining's statements)."""
    path, task = fix
    parsed: list[str] = []
    parse = ast.parse

    def counting(source: str, *args: object, **kwargs: object) -> ast.Module:
        parsed.append(source)
        return parse(source)

    monkeypatch.setattr(ast, "parse", counting)
    with Git(path) as git:
        _, names = fix_only(git, task)
    assert names == {"cleaned", "brand_new_helper"}
    assert parsed and sum(map(len, parsed)) < len(AFTER)


def test_the_parent_tree_is_not_grepped(
    fix: tuple[Path, Task], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parent's files are read through ``cat-file``, each at most once: no ``git
    grep`` (a process reading the whole tree for every fix)."""
    path, task = fix
    commands: list[tuple[str, ...]] = []
    run = Git.run

    def recording(self: Git, *args: str) -> str:
        commands.append(args)
        return run(self, *args)

    monkeypatch.setattr(Git, "run", recording)
    with Git(path) as git:
        fix_only(git, task)
    assert [command[0] for command in commands if command[0] == "grep"] == []


@pytest.mark.parametrize(
    ("text", "lines", "expected"),
    [
        (BEFORE + "x = [\nfoo,\n]\n", {15}, {"foo"}),  # a line at the margin, in brackets
        ("@first\n@second\ndef f():\n    pass\n", {1}, {"first"}),  # a cut decorator
        ("s = '''\ndef f(a):\n'''\nvalue = s\n", {4}, {"value", "s"}),  # a def in a string
        ("try:\n    import a\nexcept ImportError:\n    a = None\n", {4}, {"a"}),
        ("@first\n@second(\n    x)\ndef f(y):\n    return y\n", {3, 5}, {"x", "y"}),
    ],
)
def test_cut_definitions_name_what_the_whole_module_does(
    text: str, lines: set[int], expected: set[str]
) -> None:
    """Where the cut at definitions is not whole statements, the module is read whole:
    the names are those the whole module's tree gives."""
    whole = reported._tree_names(ast.parse(text), lines)
    assert reported._code_names(text, lines) == whole == expected


def test_the_fixes_of_a_history_read_a_parent_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two fixes whose parents share a file: the second reads only what changed (a
    history's fixes, newest first, share most of their parents' files)."""
    repo = RepositoryBuilder(tmp_path / "repo")
    shared = "".join(f"name_{n} = {n}\n" for n in range(50))
    fixes = []
    for number in (1, 2):
        before = {"src/pkg/shared.py": shared, f"src/pkg/mod{number}.py": "value = 1\n"}
        parent = repo.commit(f"Before fix {number}", before)
        sha = repo.commit(f"Fix {number}", {f"src/pkg/mod{number}.py": f"value = novel_{number}\n"})
        fixes.append(
            Task(
                id=Task.id_for(sha),
                sha=sha,
                parent=parent,
                date="2024-01-01",
                title="Fix",
                issue=TaskIssue(number=0),
                source_files=[f"src/pkg/mod{number}.py"],
                test_files=[],
            )
        )
    asked: list[str] = []
    contents = Git.contents

    def counting(self: Git, ids: Iterable[str]) -> dict[str, bytes | None]:
        wanted = list(ids)
        asked.extend(wanted)
        return contents(self, wanted)

    monkeypatch.setattr(Git, "contents", counting)
    with Git(repo.path) as git:
        parents = reported.Parents(git)
        found = [fix_only(git, task, parents)[1] for task in fixes]
    assert found == [{"novel_1"}, {"novel_2"}]
    assert len(asked) == len(set(asked))  # shared.py, mod1.py at the first parent: read once
