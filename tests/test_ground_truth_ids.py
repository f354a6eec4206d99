"""Ground truth on real git and real pytest, read back with a plain JSON parser: test ids
are pytest's own text, and a test that is flaky before the fix is set aside, not
fail-to-pass."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import PluginChoice
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.store.store import ORACLES, Store
from bugbout.testing import RepositoryBuilder
from history import calc_settings

WORDS = "def words(text):\n    return text.split(' ')\n"
FIXED = "def words(text):\n    return text.split()\n"
TEST_WORDS = r"""import re

import pytest

from calc.words import words


@pytest.mark.parametrize("text", ["a\nb", "a\tb", "a  b", "a b"])
def test_any_whitespace_splits(text):
    assert words(text) == ["a", "b"]


@pytest.mark.parametrize("pattern", [r"\d+", r"\w+\s", r"\\"])
def test_patterns_compile(pattern):
    assert re.compile(pattern)


@pytest.mark.parametrize("text", ["\u1555 x", "caf\xe9 x"])
def test_letters(text):
    assert words(text)[1] == "x"
"""


def _collected(tree: Path) -> list[str]:
    """The node ids pytest itself collects in ``tree``, one a line."""
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider"],
        cwd=tree, capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(tree / "src"), "PATH": "/usr/bin:/bin"},
    ).stdout  # fmt: skip
    return [line for line in listed.splitlines() if "::" in line]


@pytest.mark.slow
def test_oracles_json_holds_pytests_ids_verbatim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/calc/__init__.py": "", "src/calc/words.py": WORDS})
    sha = repo.commit(
        "Fix splitting on any whitespace (#4)",
        {"src/calc/words.py": FIXED, "tests/test_words.py": TEST_WORDS},
    )
    ids = _collected(repo.path)
    assert {"\\n" in i for i in ids} == {True, False} and any("\\\\" in i for i in ids)
    settings = calc_settings(repo.path, reruns=2)
    plugins = make_plugins(entry_points=False)
    store = Store(tmp_path / ".bugbout")
    compute_oracles(settings, plugins, store, mine_tasks(settings, plugins, store))

    oracle = json.loads(store.path(ORACLES).read_text(encoding="utf-8"))[sha[:12]]
    assert oracle["status"] == "ok"
    assert sorted(oracle["fail_to_pass"] + oracle["pass_to_pass"]) == sorted(ids)
    splits = "tests/test_words.py::test_any_whitespace_splits"
    assert oracle["fail_to_pass"] == [f"{splits}[a  b]", f"{splits}[a\\nb]", f"{splits}[a\\tb]"]
    assert all(sorted(run["outcomes"]) == sorted(ids) for run in oracle["runs"])


FLAKY = '''import os
from pathlib import Path

from calc.words import words


def test_splits_a_newline():
    assert words("a\\nb") == ["a", "b"]


def test_first_run_on_this_machine():
    """Fails the first time it runs here (a cache it fills, a port it waits for)."""
    counter = Path(os.environ["FLAKY_COUNTER"])
    runs = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(runs))
    assert runs > 1
'''


@pytest.mark.slow
def test_a_test_flaky_before_the_fix_is_unstable_not_fail_to_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failing in one run of the unfixed code and passing after is not a fix when it also
    passes in another run of the unfixed code."""
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/calc/__init__.py": "", "src/calc/words.py": WORDS})
    sha = repo.commit(
        "Fix splitting on newlines (#5)",
        {"src/calc/words.py": FIXED, "tests/test_words.py": FLAKY},
    )
    counter = tmp_path / "counter"
    settings = calc_settings(repo.path, reruns=2).model_copy(
        update={"sandbox": PluginChoice(name="none")}
    )
    settings.project.env["FLAKY_COUNTER"] = str(counter)
    plugins = make_plugins(entry_points=False)
    store = Store(tmp_path / ".bugbout")
    oracles = compute_oracles(settings, plugins, store, mine_tasks(settings, plugins, store))

    oracle = oracles.root[sha[:12]]
    flaky = "tests/test_words.py::test_first_run_on_this_machine"
    assert oracle.fail_to_pass == ["tests/test_words.py::test_splits_a_newline"]
    assert oracle.unstable == [flaky]
    assert [run.label for run in oracle.runs] == ["before-1", "before-2", "after-1", "after-2"]
    assert [run.outcomes[flaky] for run in oracle.runs] == [
        "failed", "passed", "passed", "passed"
    ]  # fmt: skip
    assert int(counter.read_text()) == 4
