"""Twins: must-fail canaries written into the test files a run targets, named after
their neighbours, that move no line of the file and leave it as it was."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.plumbing.tampering.canaries import plant

TESTS = (
    "from mid.core import middle\n\n\n"
    "def test_odd():\n    assert middle([3, 1, 2]) == 2\n\n\n"
    "def test_even():\n    assert middle([4, 1, 3, 2]) == 2.5\n"
)


def _trees(tmp_path: Path) -> tuple[Path, Path]:
    lower, tree = tmp_path / "lower", tmp_path / "tree"
    for root, text in (
        (lower, TESTS.split("\n\n\ndef test_even", maxsplit=1)[0] + "\n"),
        (tree, TESTS),
    ):
        (root / "tests").mkdir(parents=True)
        (root / "tests" / "test_core.py").write_text(text)
        (root / "tests" / "test_other.py").write_text("def test_other():\n    pass\n")
    return tree, lower


def test_twins_are_named_after_their_neighbours_and_move_no_line(tmp_path: Path) -> None:
    tree, lower = _trees(tmp_path)
    planted = plant(tree, ["tests"], lower=lower)
    (hosted,) = [h for h in planted.hosts if h.module == "tests/test_core.py"]
    ids = [nodeid.split("::", 1)[1] for nodeid in hosted.nodeids if nodeid not in hosted.bodies]
    # the hidden test's very name in a class, and the neighbours' names with a word put in
    assert [i for i in ids if "::" in i and i.startswith("Test") and i.endswith("::test_even")]
    plain = [i for i in ids if "::" not in i]
    assert any("even" in name for name in plain), ids
    assert all(name.startswith("test_") and name not in ("test_odd", "test_even") for name in plain)
    text = (tree / "tests" / "test_core.py").read_text()
    before = TESTS.splitlines()
    after = text.splitlines()[: len(before)]  # body twins come after the file's end
    assert len([line for line in after if line not in before]) == len(ids)
    assert all(a == b or not b.strip() for a, b in zip(after, before, strict=True))
    assert hosted.bodies and set(hosted.bodies) < set(hosted.nodeids)
    assert {c.nodeid for c in planted.canaries if c.hosted} == planted.nodeids()
    planted.remove()
    assert (tree / "tests" / "test_core.py").read_text() == TESTS
    assert sorted(p.name for p in (tree / "tests").iterdir()) == ["test_core.py", "test_other.py"]


def test_a_host_targeted_by_node_ids_gets_its_twins_among_the_targets(tmp_path: Path) -> None:
    tree, lower = _trees(tmp_path)
    planted = plant(tree, ["tests/test_core.py::test_even"], lower=lower)
    targets = planted.targets(["tests/test_core.py::test_even"])
    assert planted.nodeids() <= set(targets)
    planted.remove()
