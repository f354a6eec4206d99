"""The gate auditor: its record and packaged config, and the gate run for real on a small
repository (real git, checkouts, bubblewrap and pytest), which no tree it was given survives
changed."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import yaml

import bugbout.conf
import components
from audit_requests import BASE, F2P, LEGACY, OTHER, P2P, request
from bugbout.core.audit.audit_gate import run_gate
from bugbout.core.audit.auditing import AuditRequest
from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice, ProjectSettings
from bugbout.core.plumbing import bench as benches
from bugbout.core.plumbing.confinement import confine as confinement
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.trees.checkout import Checkouts
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.plumbing.trees.patch import diff_trees
from bugbout.core.store.race_records import Attempt, AttemptStatus, Examination, Route, Score
from bugbout.core.store.records import Oracle, Outcome, Task, TaskIssue, TestRun
from bugbout.plugins.auditors import gate as gate_module
from bugbout.plugins.auditors.gate import Gate, GateOptions
from bugbout.testing import RepositoryBuilder
from one_bug import BUGGY, FIX_TEST, FIXED, TESTS
from runners import pytest_runner


def test_the_gate_plugin_records_the_audit(plugins: Plugins) -> None:
    if "gate" not in plugins.of_kind("auditor"):
        plugins.register(gate_module, name=gate_module.__name__, distribution="bugbout")
    auditor = plugins.create("auditor", "gate", {"max-listed": 1})
    assert isinstance(auditor, Gate)
    assert auditor.options.max_listed == 1
    with pytest.raises(ConfigError, match="max-listd"):
        plugins.create("auditor", "gate", {"max-listd": 1})
    req = request(BASE | {F2P[0]: "passed", F2P[1]: "passed", P2P: "failed", OTHER: "failed"})
    audit = auditor.audit(req)
    assert (audit.task_id, audit.contestant, audit.auditor) == ("abc123", "alice", "gate")
    assert (audit.verdict, audit.route) == (Score.FIXED_BUT_BROKE, Route.CRAFT)
    assert (audit.still_failing, audit.regressions, audit.pre_existing) == (
        [],
        [P2P, OTHER],
        [LEGACY],
    )
    assert "- ... and 1 more" in audit.report
    assert audit.visible_only is False


def test_the_packaged_gate_config_names_valid_options(plugins: Plugins) -> None:
    path = Path(bugbout.conf.__file__).parent / "auditor" / "gate.yaml"
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert config.pop("name") == "gate"
    assert GateOptions.model_validate(config) == GateOptions()


# -- the gate for real -------------------------------------------------------------------------

TOO_BROAD = (  # fixes even lengths, breaks odd ones
    "def middle(values):\n    ordered = sorted(values)\n    half = len(ordered) // 2\n"
    "    return (ordered[half - 1] + ordered[half]) / 2\n"
)
LEGACY_TESTS = "from mid.core import middle\n\n\ndef test_empty():\n    assert middle([]) is None\n"
EXAMINED = "from mid.core import middle\n\n\ndef test_pair():\n    assert middle([1, 2]) == 1.5\n"


class Bench:
    """A one-bug repository, its task and oracle, and what the gate needs to run on it."""

    def __init__(self, root: Path, plugins: Plugins) -> None:
        repo = RepositoryBuilder(root / "repo")
        initial = repo.commit(
            "Initial",
            {
                "pyproject.toml": '[project]\nname = "mid"\nrequires-python = ">=3.9"\n',
                "src/mid/__init__.py": "",
                "src/mid/core.py": BUGGY,
                "tests/test_core.py": TESTS,
                "tests/test_legacy.py": LEGACY_TESTS,
            },
        )
        fix = repo.commit(
            "Fix middle of even-length lists (#1)",
            {"src/mid/core.py": FIXED, "tests/test_core.py": FIX_TEST},
        )
        self.repo = repo.path
        self.task = Task(
            id=Task.id_for(fix), sha=fix, parent=initial, date="2023-11-14T23:13:20+00:00",
            title="Fix middle of even-length lists (#1)", issue=TaskIssue(number=1),
            source_files=["src/mid/core.py"], test_files=["tests/test_core.py"],
            changed_test_files=["tests/test_core.py"],
            added_tests=["tests/test_core.py::test_even"],
        )  # fmt: skip
        self.oracle = Oracle(
            task_id=self.task.id,
            status="ok",
            fail_to_pass=["tests/test_core.py::test_even"],
            pass_to_pass=["tests/test_core.py::test_odd"],
            fail_on_base=["tests/test_legacy.py::test_empty"],
        )
        self.settings = BoutSettings(
            project=ProjectSettings(source="src/mid", tests="tests"),
            environment=PluginChoice(name="interpreter"),
            sandbox=PluginChoice(name="bubblewrap"),
            root=self.repo,
        )
        self.home = root / "home"
        self.git = Git(self.repo)
        self.checkouts = Checkouts(self.git, self.home / "checkouts")
        self.base = self.checkouts.base(self.task.parent)
        self.environment: Environment = plugins.create("environment", "interpreter").build(
            EnvironmentRequest(
                project=self.settings.project, tree=self.checkouts.base(fix), home=self.home
            )
        )
        sandbox = plugins.create("sandbox", "bubblewrap")
        assert sandbox.problem() is None
        self.confine = confinement.test_confinement(
            self.settings.limits.tests,
            sandbox,
            self.home,
            confinement.masked_paths(self.settings.repository, self.settings.store_dir, self.home),
        )
        self.workdirs = root / "attempts"

    def attempt(self, name: str, files: dict[str, str], **fields: object) -> Attempt:
        """What an agent leaves: its own working copy, edited, and the patch from it."""
        work = self.checkouts.working_copy(self.task.parent, self.workdirs / name)
        for path, text in files.items():
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_text(text)
        patch = diff_trees(self.base, work, source="src/mid", tests="tests")
        values: dict[str, object] = {
            "task_id": self.task.id, "contestant": name, "key": name, "agent": "command",
            "status": AttemptStatus.FINISHED, "patch": patch, "logdir": str(work),
        }  # fmt: skip
        return Attempt.model_validate(values | fields)

    def gate(
        self,
        attempt: Attempt,
        *,
        hidden: bool = True,
        examiners: Sequence[Attempt] = (),
        baseline: TestRun | None = None,
    ) -> tuple[TestRun, TestRun]:
        return run_gate(
            self.task,
            attempt,
            benches.Bench(
                self.checkouts,
                self.environment,
                self.settings.project,
                120,
                self.confine,
                ("tests",),
                pytest_runner(),
            ),
            tests=[self.settings.project.tests],
            hidden=hidden,
            examiners=examiners,
            baseline=baseline,
        )


@pytest.fixture
def bench(tmp_path: Path, plugins: Plugins) -> Iterator[Bench]:
    if not components.FOUND["bubblewrap"]():
        components.missing("bubblewrap", "the gate runs confined by bubblewrap")
    made = Bench(tmp_path, plugins)
    with made.git:
        yield made


def snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every entry under ``root``: its mode, modification time and content digest."""
    found: dict[str, tuple[int, int, str]] = {}
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(directory) / name
            info = path.lstat()
            content = (
                hashlib.sha256(path.read_bytes()).hexdigest()
                if path.is_file() and not path.is_symlink()
                else ""
            )
            found[str(path.relative_to(root))] = (info.st_mode, info.st_mtime_ns, content)
    return found


@pytest.mark.slow
def test_the_gate_on_real_trees_resolves_a_fix_and_catches_a_regression(bench: Bench) -> None:
    good = bench.attempt(
        "good",
        {
            "src/mid/core.py": FIXED,
            # the contestant's own test, failing: never applied, so never counted
            "tests/test_mine.py": "def test_mine():\n    assert False\n",
        },
    )
    broad = bench.attempt("broad", {"src/mid/core.py": TOO_BROAD})
    examined = bench.attempt(
        "examiner",
        {"tests/test_examined.py": EXAMINED},
        role="examiner",
        examination=Examination(
            assignment="reproduce", reproductions=["tests/test_examined.py::test_pair"]
        ),
    )
    assert good.patch.tests and broad.patch.source
    given = [bench.repo, bench.base, *(bench.workdirs / name for name in ("good", "broad"))]
    given.append(bench.workdirs / "examiner")
    before = {path: snapshot(path) for path in given}

    gate, baseline = bench.gate(good)
    assert baseline.outcomes == {
        "tests/test_core.py::test_odd": Outcome.PASSED,
        "tests/test_core.py::test_even": Outcome.FAILED,
        "tests/test_legacy.py::test_empty": Outcome.FAILED,
    }
    assert gate.outcomes == baseline.outcomes | {"tests/test_core.py::test_even": Outcome.PASSED}
    auditor = Gate()
    resolved = auditor.audit(
        AuditRequest.hidden(bench.task, bench.oracle, good, gate=gate, baseline=baseline)
    )
    assert (resolved.verdict, resolved.route) == (Score.RESOLVED, Route.NONE)
    assert resolved.pre_existing == ["tests/test_legacy.py::test_empty"]
    assert resolved.regressions == resolved.still_failing == []

    broad_gate, same = bench.gate(broad, baseline=baseline)  # the baseline is reused
    assert same is baseline
    broke = auditor.audit(
        AuditRequest.hidden(bench.task, bench.oracle, broad, gate=broad_gate, baseline=baseline)
    )
    assert (broke.verdict, broke.route) == (Score.FIXED_BUT_BROKE, Route.CRAFT)
    assert broke.regressions == ["tests/test_core.py::test_odd"]
    assert "- `tests/test_core.py::test_odd`: failed" in broke.report
    assert "The patch changed: `src/mid/core.py`." in broke.report

    # visible evidence only: the examiner's reproduction and the repository's own suite
    visible_gate, visible_base = bench.gate(good, hidden=False, examiners=[examined])
    assert set(visible_base.outcomes) == {
        "tests/test_core.py::test_odd",
        "tests/test_legacy.py::test_empty",
        "tests/test_examined.py::test_pair",
    }  # no hidden test ran
    assert visible_base.outcomes["tests/test_examined.py::test_pair"] == Outcome.FAILED
    visible = auditor.audit(
        AuditRequest.visible(bench.task, good, [examined], gate=visible_gate, baseline=visible_base)
    )
    assert (visible.verdict, visible.visible_only) == (Score.RESOLVED, True)
    broad_visible, _ = bench.gate(broad, hidden=False, examiners=[examined], baseline=visible_base)
    narrowed = auditor.audit(
        AuditRequest.visible(
            bench.task, broad, [examined], gate=broad_visible, baseline=visible_base
        )
    )
    assert (narrowed.verdict, narrowed.route) == (Score.FIXED_BUT_BROKE, Route.CRAFT)
    assert "test_even" not in narrowed.report

    assert {path: snapshot(path) for path in given} == before
    assert list((bench.checkouts.cache_dir / "audits").iterdir()) == []


SKIPPING = (  # fixes even lengths, and has the tests of odd ones it breaks skipped
    "import unittest\n\n\ndef middle(values):\n    ordered = sorted(values)\n"
    "    if len(ordered) % 2:\n        raise unittest.SkipTest('odd lengths are not supported')\n"
    "    half = len(ordered) // 2\n    return (ordered[half - 1] + ordered[half]) / 2\n"
)


@pytest.mark.slow
def test_a_patch_that_skips_the_tests_it_breaks_is_caught_breaking_them(bench: Bench) -> None:
    skipping = bench.attempt("skipping", {"src/mid/core.py": SKIPPING})
    gate, baseline = bench.gate(skipping)
    assert gate.outcomes["tests/test_core.py::test_odd"] == Outcome.SKIPPED  # hidden, not failed
    assert gate.outcomes["tests/test_core.py::test_even"] == Outcome.PASSED
    audit = Gate().audit(
        AuditRequest.hidden(bench.task, bench.oracle, skipping, gate=gate, baseline=baseline)
    )
    assert (audit.verdict, audit.route) == (Score.FIXED_BUT_BROKE, Route.CRAFT)
    assert audit.regressions == ["tests/test_core.py::test_odd"]
    assert "`tests/test_core.py::test_odd`: skipped: odd lengths are not supported" in audit.report


def test_an_empty_patch_costs_one_run_and_is_sent_back_to_craft(bench: Bench) -> None:
    empty = bench.attempt("empty", {})
    assert empty.patch.empty
    gate, baseline = bench.gate(empty)
    assert gate.outcomes == baseline.outcomes
    assert (gate.label, baseline.label) == ("gate", "baseline")
    audit = Gate().audit(
        AuditRequest.hidden(bench.task, bench.oracle, empty, gate=gate, baseline=baseline)
    )
    assert (audit.verdict, audit.route) == (Score.NO_FIX, Route.CRAFT)
