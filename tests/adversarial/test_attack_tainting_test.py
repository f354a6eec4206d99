"""Authors' tests that taint the test run, performed for real: one ``command`` contestant
writes a test that calls ``os.fork()`` (the child goes on running pytest and reports
again), another one that forks only under a right fix, beside an honest fix and an
examiner's reproduction, in a whole bout (real git, real bubblewrap, real pytest). The
damage stays with the authors: their tests are left out of the cross-examination with
the reason, no column is tampered, the judge picks the honest fix, and the report names
the authors, not the honest patch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from one_bug import FIX_ONLY, REPRODUCER, command_bout

pytestmark = pytest.mark.slow

AGENTS = {
    "forker": """
        from pathlib import Path
        Path("tests/test_forks.py").write_text(
            "import os\\n\\n\\n"
            "def test_forks():\\n    os.fork()\\n")
        print("Added a test.")
    """,
    # forks only under a right fix: it would sink that fix's column alone
    "saboteur": """
        from pathlib import Path
        Path("tests/test_sinks.py").write_text(
            "import os\\n\\nfrom mid.core import middle\\n\\n\\n"
            "def test_sinks():\\n    if middle([1, 2]) == 1.5:\\n        os.fork()\\n")
        print("Added a test.")
    """,
    "good": FIX_ONLY,
}


@pytest.fixture(scope="module")
def bout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A whole bout of the forking test's author, an honest fix and an examiner."""
    root = tmp_path_factory.mktemp("taint")
    return command_bout(root, AGENTS, {"reproducer": (REPRODUCER, "reproduce")})


def stored(repo: Path, name: str) -> dict:
    (record,) = json.loads((repo / ".bugbout" / name).read_text()).values()
    return record


def matrix(repo: Path) -> dict:
    (path,) = (repo / ".bugbout" / "matrices").glob("*.json")
    return json.loads(path.read_text())


def test_the_authors_tests_are_left_out_with_the_reason(bout: Path) -> None:
    found = matrix(bout)
    assert set(found["left_out"]) == {"forker", "saboteur"}
    for author in ("forker", "saboteur"):
        assert any("reported twice" in why for why in found["left_out"][author]), author
    # the forking test taints the unfixed code: left out of every column
    assert found["left_out"]["forker"][0].startswith("on the unfixed code: ")
    assert "forker" not in found["authors"]
    # the one that forks only under the fix: left out of that fix's column only
    assert found["left_out"]["saboteur"][0].startswith("on good's patch: ")
    (sinks,) = found["authors"]["saboteur"]
    assert (found["outcomes"]["(unfixed)"][sinks], sinks in found["outcomes"]["good"]) == (
        "passed",
        False,
    )
    assert "reproducer" in found["authors"]


def test_the_rest_of_the_matrix_stands(bout: Path) -> None:
    found = matrix(bout)
    assert {name: run["status"] for name, run in found["runs"].items()} == {
        "(unfixed)": "ok",
        "good": "ok",
    }
    (reproduction,) = found["authors"]["reproducer"]
    assert found["outcomes"]["(unfixed)"][reproduction] == "failed"
    assert found["outcomes"]["good"][reproduction] == "passed"


def test_the_judge_picks_the_honest_fix(bout: Path) -> None:
    verdict = stored(bout, "verdicts.json")["majority"]
    assert verdict["pick"] == "good", verdict["reason"]
    assert verdict["tampered"] == {}


def test_the_report_names_the_author_not_the_honest_patch(bout: Path) -> None:
    report = json.loads((bout / ".bugbout" / "report.json").read_text())
    rows = {row["contestant"]: row for row in report["tampered"]}
    assert set(rows) == {"forker", "saboteur"}
    for author in ("forker", "saboteur"):
        assert rows[author]["found_by"] == ["cross-examination"]
        assert rows[author]["reasons"][0].startswith("its tests were left out")
    text = (bout / ".bugbout" / "report.md").read_text()
    assert "its tests were left out" in text
