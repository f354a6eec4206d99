"""What planting twins costs bugbout's own process: what a test file's text holds (its
tests, its words, its identifiers, the blank lines between its statements) is read once
for the runs of a task, and the old tree's test names once per file; whether a body twin
can copy a test is asked only of the tests a run draws; every run still draws its own
twins."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bugbout.core.plumbing.tampering import canary_twins

HOST = textwrap.dedent(
    """\
    import pytest


    def helper_value(x):
        return x * 2


    @pytest.mark.parametrize("n", range(3))
    def test_doubles(n):
        assert helper_value(n) == n * 2


    def test_four():
        assert helper_value(2) == 4


    class TestGroup:
        def test_member(self):
            assert helper_value(1) == 2


    def test_five():
        assert helper_value(2) != 5
    """
)


def _trees(root: Path) -> tuple[Path, Path]:
    tree, lower = root / "tree", root / "lower"
    for folder in (tree, lower):
        (folder / "tests").mkdir(parents=True)
    (tree / "tests" / "test_host.py").write_text(HOST)
    (lower / "tests" / "test_host.py").write_text(HOST.replace("def test_five", "def test_old"))
    return tree, lower


def test_a_test_file_is_read_once_for_the_twins_of_many_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary_twins._parsed.cache_clear()
    canary_twins._defined.cache_clear()
    tree, lower = _trees(tmp_path)
    host = tree / "tests" / "test_host.py"
    reads: list[str] = []
    for name in ("tests", "_words", "_blank_boundaries", "_test_names"):
        real = getattr(canary_twins, name)
        monkeypatch.setattr(
            canary_twins, name, lambda *a, real=real, name=name: reads.append(name) or real(*a)
        )
    patterns: list[str] = []
    for name in ("IDENTIFIER", "DEFINED"):
        real_pattern = getattr(canary_twins, name)
        monkeypatch.setattr(canary_twins, name, _Counted(real_pattern, name, patterns))

    planted_texts = set()
    for _ in range(6):
        hosts = canary_twins.plant_twins(tree, lower, ["tests/test_host.py"], lambda m: None)
        assert [hosted.module for hosted in hosts] == ["tests/test_host.py"]
        assert len(hosts[0].nodeids) >= 3 and hosts[0].bodies  # named twins and body twins
        planted_texts.add(host.read_text())
        canary_twins.restore(tree, hosts)
        assert host.read_text() == HOST
    monkeypatch.undo()

    assert sorted(reads) == ["_blank_boundaries", "_test_names", "_words", "tests"]
    assert sorted(patterns) == ["DEFINED", "IDENTIFIER"]
    assert len(planted_texts) > 1, "every run drew the same twins"


class _Counted:
    """A compiled pattern whose ``findall`` calls are counted by name."""

    def __init__(self, pattern: object, name: str, calls: list[str]) -> None:
        self.pattern, self.name, self.calls = pattern, name, calls

    def findall(self, text: str) -> list[str]:
        self.calls.append(self.name)
        return self.pattern.findall(text)  # type: ignore[attr-defined,no-any-return]


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    canary_twins._parsed.cache_clear()
    tree, lower = _trees(tmp_path)
    host = tree / "tests" / "test_host.py"
    canary_twins.restore(tree, canary_twins.plant_twins(tree, lower, ["tests"], lambda m: None))
    host.write_text(HOST + "\n\ndef test_added_later():\n    assert helper_value(3) == 6\n")

    twins = []
    for _ in range(12):
        hosts = canary_twins.plant_twins(tree, lower, ["tests/test_host.py"], lambda m: None)
        twins += [nodeid for hosted in hosts for nodeid in hosted.nodeids]
        canary_twins.restore(tree, hosts)

    assert any("added" in nodeid for nodeid in twins), twins  # the new test is a model


def _suite(root: Path) -> tuple[Path, Path]:
    """A tree whose edits wrote ``test_new.py`` and changed ``test_host.py``, over a lower
    tree with two more test files."""
    tree, lower = _trees(root)
    (tree / "tests" / "test_new.py").write_text(HOST.replace("test_", "test_new_"))
    for name in ("test_other.py", "test_more.py"):
        (lower / "tests" / name).write_text(HOST)
    return tree, lower


def test_the_other_test_files_are_not_looked_for_when_the_written_ones_suffice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree, lower = _suite(tmp_path)
    walked: list[Path] = []
    real = canary_twins._test_files
    monkeypatch.setattr(
        canary_twins, "_test_files", lambda root, *rest: walked.append(root) or real(root, *rest)
    )

    hosts = canary_twins.plant_twins(tree, lower, ["tests"], lambda m: None)
    canary_twins.restore(tree, hosts)

    assert sorted(h.module for h in hosts) == ["tests/test_host.py", "tests/test_new.py"]
    assert lower not in walked


def test_the_other_test_files_host_a_twin_when_the_written_ones_run_out(tmp_path: Path) -> None:
    tree, lower = _suite(tmp_path)
    (tree / "tests" / "test_new.py").unlink()
    seen = set()
    for _ in range(20):
        (tree / "tests" / "test_other.py").write_text(HOST)  # exposed, as an overlay would
        (tree / "tests" / "test_more.py").write_text(HOST)
        hosts = canary_twins.plant_twins(tree, lower, ["tests"], lambda m: None)
        canary_twins.restore(tree, hosts)
        assert hosts[0].module == "tests/test_host.py"
        seen.update(h.module for h in hosts[1:])

    assert seen == {"tests/test_other.py", "tests/test_more.py"}


def test_only_the_tests_a_run_draws_are_asked_whether_a_twin_can_copy_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary_twins._parsed.cache_clear()
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    many = "".join(f"def test_{n}():\n    assert {n} == {n}\n\n\n" for n in range(40))
    (tree / "tests" / "test_many.py").write_text("def test_gen():\n    yield 1\n\n\n" + many)
    asked: list[str] = []
    real = canary_twins.copyable
    monkeypatch.setattr(
        canary_twins, "copyable", lambda test: asked.append(test.function.name) or real(test)
    )

    for _ in range(6):
        asked.clear()
        hosts = canary_twins.plant_twins(tree, None, ["tests/test_many.py"], lambda m: None)
        canary_twins.restore(tree, hosts)
        assert len(hosts[0].bodies) == canary_twins.BODIES
        assert len(asked) <= canary_twins.BODIES + 1, asked
