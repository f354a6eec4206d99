"""A commit's message is read from the object store, exactly as ``git log --format=%B``
gives it (re-encoded, a newline after it), with no git process of its own: a history's
statements ask it of every task."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bugbout.core.plumbing.trees.git import Git, GitError
from bugbout.testing import RepositoryBuilder

MESSAGES = {
    "plain": b"Fix the parser (#12)\n\nIt read one byte too many.\n",
    "no newline": b"no newline at the end",
    "empty": b"",
    "trailing": b"trail\n\n\n",
    "carriage": b"line\r\nnext\r\n",
    "not utf-8": b"caf\xe9 \xff\n",
}


def _commit(repo: Path, message: bytes, *config: str) -> str:
    tree = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD^{tree}"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    made = subprocess.run(
        ["git", "-C", str(repo), *config, "commit-tree", tree],
        input=message, check=True, capture_output=True,
    )  # fmt: skip
    return made.stdout.decode().strip()


def _logged(repo: Path, sha: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), "log", "-1", "--format=%B", sha, "--"],
        check=True, capture_output=True,
    ).stdout  # fmt: skip
    return out.decode("utf-8", "replace")


def test_messages_are_read_as_git_log_gives_them_without_a_process_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit("Initial", {"a.py": "A = 1\n"})
    shas = {name: _commit(repo.path, message) for name, message in MESSAGES.items()}
    shas["latin-1"] = _commit(
        repo.path, "café latin\n\nbodyé\n".encode("latin-1"), "-c", "i18n.commitEncoding=ISO-8859-1"
    )
    expected = {name: _logged(repo.path, sha) for name, sha in shas.items()}
    assert expected["latin-1"] == "café latin\n\nbodyé\n\n"
    with Git(repo.path) as git:
        assert git.message(shas["plain"]) == expected["plain"]

        def no_process(*args: object, **kwargs: object) -> None:
            raise AssertionError(f"a git process was started: {args}")

        monkeypatch.setattr(subprocess, "run", no_process)
        assert {name: git.message(sha) for name, sha in shas.items()} == expected
        with pytest.raises(GitError):
            git.message("0" * 40)
