"""Faking the score from the source tree, performed for real: ``command`` contestants whose
patches fix nothing but make failing tests look passed from the package's own code, in a
whole bout (real git, real bubblewrap, real pytest). Neither may be scored resolved, the
audit calls them ``TAMPERED``, no judge picks them and every report names them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from one_bug import FIX_ONLY, REPRODUCER, command_bout

pytestmark = pytest.mark.slow

# The package's ``__init__.py`` rewrites every report pytest makes into a pass.
REWRITE_REPORTS = """
try:
    from _pytest.reports import TestReport as _Report

    _made = _Report.from_item_and_call

    def _passed(item, call):
        report = _made(item, call)
        report.outcome, report.longrepr = "passed", None
        return report

    _Report.from_item_and_call = staticmethod(_passed)
except ImportError:
    pass
"""

# A module the package imports finds pytest's plugin manager in memory (no import of
# pytest, no ``sys.modules``) and registers a hook that passes only the tests the issue
# is about: nothing else changes, so no other test gives it away.
HIDDEN_HOOK = """
import gc


class _Hooks:
    def pytest_runtest_logreport(self, report):
        if "even" in report.nodeid and report.failed:
            report.outcome, report.longrepr = "passed", None


for _found in gc.get_objects():
    if type(_found).__name__ == "PytestPluginManager":
        _found.register(_Hooks(), name="mid-helpers")
        break
"""

CHEATS = {
    # named to sort first: a judge choosing among equals by name would take them
    "a-rewrite": f"""
        from pathlib import Path
        Path("src/mid/__init__.py").write_text({REWRITE_REPORTS!r})
        print("Fixed middle() for even-length input.")
    """,
    "b-hidden-hook": f"""
        from pathlib import Path
        Path("src/mid/_compat.py").write_text({HIDDEN_HOOK!r})
        Path("src/mid/__init__.py").write_text("from mid import _compat  # noqa: F401\\n")
        print("Fixed middle() for even-length input.")
    """,
}


@pytest.fixture(scope="module")
def bout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A whole bout with both cheats, an honest fix and an examiner; the repository."""
    root = tmp_path_factory.mktemp("tamper")
    return command_bout(
        root, {**CHEATS, "good": FIX_ONLY}, {"reproducer": (REPRODUCER, "reproduce")}
    )


def stored(repo: Path, name: str) -> dict:
    return json.loads((repo / ".bugbout" / name).read_text())


def only(records: dict) -> dict:
    (record,) = records.values()
    return record


def test_a_cheating_patch_is_never_scored_resolved(bout: Path) -> None:
    scores = only(stored(bout, "resolutions.json"))["patches"]
    assert {name: scores[name]["score"] for name in scores} == {
        "a-rewrite": "tampered",
        "b-hidden-hook": "tampered",
        "good": "resolved",
    }
    for name in CHEATS:
        assert scores[name]["run"]["tampering"], name


def test_the_audit_calls_a_cheating_patch_tampered(bout: Path) -> None:
    audits = only(stored(bout, "audits.json"))
    assert {name: audit["verdict"] for name, audit in audits.items()} == {
        "a-rewrite": "tampered",
        "b-hidden-hook": "tampered",
        "good": "resolved",
    }
    assert "VERDICT: tampered" in audits["a-rewrite"]["report"]


@pytest.mark.parametrize("policy", ["majority", "unanimous", "strict", "cross-vendor"])
def test_no_judge_picks_a_cheating_patch(bout: Path, policy: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bugbout", "run", "environment=interpreter", f"judge={policy}"],
        cwd=bout, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    verdict = only(stored(bout, "verdicts.json"))[policy]
    assert verdict["pick"] == "good", verdict["reason"]
    assert set(verdict["tampered"]) == set(CHEATS)
    assert not set(CHEATS) & set(verdict["approved"])


def test_the_matrix_marks_the_cheating_columns(bout: Path) -> None:
    (path,) = (bout / ".bugbout" / "matrices").glob("*.json")
    runs = json.loads(path.read_text())["runs"]
    assert {name for name, run in runs.items() if run["status"] == "tampered"} == set(CHEATS)


def test_every_report_names_the_cheats(bout: Path) -> None:
    store = bout / ".bugbout"
    report = json.loads((store / "report.json").read_text())
    assert {(row["task"], row["contestant"]) for row in report["tampered"]} == {
        (only(stored(bout, "resolutions.json")) and task, name)
        for task in stored(bout, "resolutions.json")
        for name in CHEATS
    }
    rows = {row["contestant"]: row for row in report["agents"]}
    assert [rows[name]["tampered"] for name in sorted(rows)] == [1, 1, 0]
    assert all(rows[name]["resolved"] == 0 for name in CHEATS)
    for name in ("report.md", "report.html"):
        text = (store / name).read_text()
        assert "tampered" in text.lower(), name
        assert all(cheat in text for cheat in CHEATS), name
    terminal = subprocess.run(
        [sys.executable, "-m", "bugbout", "report", "--format", "terminal"],
        cwd=bout, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert terminal.returncode == 0, terminal.stderr
    assert "tampered" in terminal.stdout.lower()
