"""Patches split by area: each changed file classified as source, tests or other."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.plumbing.trees.patch import classify
from bugbout.core.store.race_records import ChangeArea
from patch_trees import SOURCE, TESTS, diff


@pytest.mark.parametrize(
    ("path", "area"),
    [
        ("src/pkg/core.py", ChangeArea.SOURCE),
        ("src/pkg/sub/mod.py", ChangeArea.SOURCE),
        ("src/pkg/data/table.json", ChangeArea.SOURCE),
        ("src/pkg/test_inline.py", ChangeArea.TEST),
        ("src/pkg/sub/core_test.py", ChangeArea.TEST),
        ("src/pkg/conftest.py", ChangeArea.TEST),
        ("conftest.py", ChangeArea.TEST),
        ("tests/conftest.py", ChangeArea.TEST),
        ("tests/test_core.py", ChangeArea.TEST),
        ("tests/helpers.py", ChangeArea.TEST),
        ("tests/data/case.json", ChangeArea.TEST),
        ("test_top.py", ChangeArea.TEST),
        ("scripts/check_test.py", ChangeArea.TEST),
        ("README.md", ChangeArea.OTHER),
        ("setup.cfg", ChangeArea.OTHER),
        ("src/pkgextra/core.py", ChangeArea.OTHER),
        ("src/pkg", ChangeArea.OTHER),
        ("testsuite/x.py", ChangeArea.OTHER),
        ("docs/testing.md", ChangeArea.OTHER),
    ],
)
def test_classify(path: str, area: ChangeArea) -> None:
    assert classify(path, source=SOURCE, tests=TESTS) == area


def test_areas_split_the_patch(trees: tuple[Path, Path]) -> None:
    base, work = trees
    (work / "src/pkg/core.py").write_text("changed\n")
    (work / "src/pkg/test_inline.py").write_text("def test_inline():\n    assert 1\n")
    (work / "src/pkg/sub/conftest.py").write_text("import pytest\n")
    (work / "tests/conftest.py").unlink()
    (work / "tests/data/case.json").write_text("{}\n")
    (work / "setup.cfg").write_text("[metadata]\n")
    patch = diff(base, work)
    assert {f.path: f.area for f in patch.files} == {
        "setup.cfg": ChangeArea.OTHER,
        "src/pkg/core.py": ChangeArea.SOURCE,
        "src/pkg/sub/conftest.py": ChangeArea.TEST,
        "src/pkg/test_inline.py": ChangeArea.TEST,
        "tests/conftest.py": ChangeArea.TEST,
        "tests/data/case.json": ChangeArea.TEST,
    }
    assert [f.path for f in patch.area(ChangeArea.SOURCE)] == ["src/pkg/core.py"]
    assert patch.source.count("diff --git ") == 1
    assert patch.tests.count("diff --git ") == 4
    assert patch.other.count("diff --git ") == 1
    assert "a/src/pkg/test_inline.py" in patch.tests and "test_inline" not in patch.source
