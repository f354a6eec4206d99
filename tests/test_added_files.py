"""An author's new test files are read from the patch itself, exactly as ``git apply``
writes them, and only when every file is a text file the patch adds; anything else, or a
diff that does not match its blob ids, is left to ``git apply``."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.crossexam import crossexam
from bugbout.core.plumbing.trees.added_files import added_files
from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.patch import apply_patch, blob_id, file_section
from bugbout.core.store.race_records import (
    Attempt,
    AttemptStatus,
    ChangeArea,
    ChangeKind,
    FileChange,
    Patch,
)
from bugbout.plugins.test_runners.pytest import Pytest
from bugbout.testing import RepositoryBuilder
from patch_trees import counting, diff, fresh_copy, state

NEW_FILES = {
    "tests/test_new.py": b"def test_new():\n    assert True\n",
    "tests/test with space.py": b"x = 1",
    "tests/test_empty.py": b"",
    "tests/test_crlf.py": "a = 1\r\nb = '\rinside'\n\x0c\x1c\u0085\u2028 = 2\n".encode(),
    "tests/deep/er/test_\u00e9t\u00e9.py": "\u00e9 = '\u00fc'\n".encode(),
    'tests/test_"quoted".py': b"q = 1\n",
    "tests/test_one_line.py": b"one\n",
    "tests/data/new.json": b'{"b": 2}',
}


def _written(work: Path, files: dict[str, bytes]) -> None:
    for path, content in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_bytes(content)


def test_added_text_files_are_read_as_git_apply_writes_them(
    trees: tuple[Path, Path], checkouts: Checkouts, repository: tuple[RepositoryBuilder, str]
) -> None:
    base, work = trees
    _written(work, NEW_FILES)
    (work / "tests/test_new.py").chmod(0o755)
    patch = diff(base, work)
    read = added_files(patch.tests, patch.area(ChangeArea.TEST))
    applied = fresh_copy(checkouts, repository, work.parent / "applied")
    apply_patch(applied, patch.tests)
    written = {path: content for path, (_, content) in state(applied).items() if path in NEW_FILES}
    assert read == written == NEW_FILES


@pytest.mark.parametrize(
    "change",
    ["modified", "deleted", "binary", "symlink"],
)
def test_a_patch_that_does_more_than_add_text_is_left_to_git(
    trees: tuple[Path, Path], change: str
) -> None:
    base, work = trees
    _written(work, {"tests/test_new.py": b"def test_new():\n    pass\n"})
    if change == "modified":
        (work / "tests/test_core.py").write_text("def test_add():\n    assert 3\n")
    elif change == "deleted":
        (work / "tests/conftest.py").unlink()
    elif change == "binary":
        (work / "tests/blob.bin").write_bytes(b"\0\1\2")
    else:
        (work / "tests/link.py").symlink_to("test_new.py")
    patch = diff(base, work)
    assert added_files(patch.tests, patch.area(ChangeArea.TEST)) is None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("+    assert True\n", "+    assert False\n"),  # content unlike its blob id
        ("+    assert True\n", "     assert True\n"),  # a context line
        ("@@ -0,0 +1,2 @@", "@@ -0,0 +1,3 @@"),  # a hunk longer than its lines
        ("new file mode 100644", "new file mode 120000"),  # a symlink in disguise
        ("b/tests/test_new.py\n", "b/tests/../evil.py\n"),  # another file's header
    ],
)
def test_a_diff_unlike_its_own_record_is_left_to_git(
    trees: tuple[Path, Path], old: str, new: str
) -> None:
    base, work = trees
    _written(work, {"tests/test_new.py": b"def test_new():\n    assert True\n"})
    patch = diff(base, work)
    assert old in patch.tests
    tampered = patch.tests.replace(old, new, 1)
    assert added_files(tampered, patch.area(ChangeArea.TEST)) is None


def _attempt(patch: Patch) -> Attempt:
    return Attempt(
        task_id="t",
        contestant="author",
        role="examiner",
        key="k",
        agent="command",
        status=AttemptStatus.FINISHED,
        patch=patch,
    )


def test_an_authors_new_modules_are_read_without_git(
    trees: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, work = trees
    _written(work, NEW_FILES)
    attempt = _attempt(diff(base, work))
    started = counting(monkeypatch)
    found = crossexam._read_modules(attempt, base, tmp_path / "scratch", Pytest())
    assert started == []  # before: two git processes per author
    assert found == {
        "tests/test_new.py": NEW_FILES["tests/test_new.py"],
        "tests/test_one_line.py": NEW_FILES["tests/test_one_line.py"],
        "tests/test_empty.py": b"",
        "tests/test_crlf.py": NEW_FILES["tests/test_crlf.py"],
        "tests/deep/er/test_\u00e9t\u00e9.py": NEW_FILES["tests/deep/er/test_\u00e9t\u00e9.py"],
        'tests/test_"quoted".py': b"q = 1\n",
    }


def test_an_author_who_changed_a_test_file_gets_git_apply(
    trees: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, work = trees
    _written(work, {"tests/test_new.py": b"def test_new():\n    pass\n"})
    (work / "tests/test_core.py").write_text("def test_add():\n    assert 3\n")
    attempt = _attempt(diff(base, work))
    started = counting(monkeypatch)
    found = crossexam._read_modules(attempt, base, tmp_path / "scratch", Pytest())
    assert [argv[:2] for argv in started] == [["git", "apply"]] * 2
    assert found == {
        "tests/test_new.py": b"def test_new():\n    pass\n",
        "tests/test_core.py": b"def test_add():\n    assert 3\n",
    }


def _sections(files: dict[str, bytes]) -> tuple[str, list[FileChange]]:
    """A diff adding ``files`` as ``diff_trees`` writes each section, and its changes."""
    text = "".join(
        file_section(path, None, "100644", None, data)[0] for path, data in files.items()
    )
    changes = [FileChange(path=path, kind=ChangeKind.ADDED, area=ChangeArea.TEST) for path in files]
    return text, changes


def test_a_hand_made_diff_is_read_only_when_written_as_diff_trees_writes_it() -> None:
    files = {"tests/test_a.py": b"a\n", "tests/test_b.py": b"b\n"}
    text, changes = _sections(files)
    assert added_files(text, changes) == files
    # a blank line between sections: git apply writes b"a\n", the index line says b"a\n\n"
    blank = text.replace("\ndiff --git", "\n\ndiff --git", 1)
    blank = blank.replace(blob_id(b"a\n"), blob_id(b"a\n\n")).replace("+1 @@", "+1,2 @@", 1)
    assert added_files(blank, changes) is None


def test_a_file_where_another_is_a_folder_is_left_to_git() -> None:
    """``git apply`` refuses both (a tree cannot hold them); reading them would install one."""
    text, changes = _sections({"tests/x": b"x\n", "tests/x/test_a.py": b"a\n"})
    assert added_files(text, changes) is None
